import fc from 'fast-check';
import { Floodgate, type Entry, type Priority } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 100;

const PRIORITY_ORDER: readonly Priority[] = ['critical', 'default', 'sheddable'];

type Step =
  | { readonly op: 'arrive'; readonly abortable: boolean; readonly priority: Priority }
  | { readonly op: 'exit'; readonly pick: number }
  | { readonly op: 'abort'; readonly pick: number }
  | { readonly op: 'advance'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constant('arrive' as const),
    abortable: fc.boolean(),
    priority: fc.constantFrom(...PRIORITY_ORDER),
  }),
  fc.record({ op: fc.constant('exit' as const), pick: fc.nat(20) }),
  fc.record({ op: fc.constant('abort' as const), pick: fc.nat(20) }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }),
);

interface Call {
  readonly seq: number;
  readonly arrivedAt: number;
  readonly controller: AbortController | undefined;
  /** Its rank in a prioritized queue (0 served first); 0 for every call in a FIFO queue. */
  readonly rank: number;
  settledAt?: number;
  outcome?: 'in' | 'refused' | 'aborted';
  entry?: Entry;
  settlements: number;
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('property: concurrency rules with a queue', () => {
  it(
    'never run more than threshold nor queue more than maxQueueLength; each call is admitted or refused once, in order (by priority when prioritized), within maxQueueingTimeMs',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: 1, max: 500 }),
          fc.boolean(),
          fc.array(step, { maxLength: 40 }),
          async (threshold, maxQueueLength, maxQueueingTimeMs, prioritized, steps) => {
            const clock = new ManualClock();
            const fg = new Floodgate({ clock });
            fg.loadFlowRules([
              {
                resource: 'r',
                metric: 'concurrency',
                threshold,
                maxQueueLength,
                maxQueueingTimeMs,
                ...(prioritized && maxQueueLength > 0 ? { prioritized } : {}),
              },
            ]);
            const ranked = prioritized && maxQueueLength > 0;
            const calls: Call[] = [];
            const admitted: number[] = [];
            const check = (): void => {
              const now = clock.now();
              const running = calls.filter((c) => c.outcome === 'in' && !c.entry!.exited).length;
              const waiting = calls.filter((c) => c.outcome === undefined);
              expect(running).toBeLessThanOrEqual(threshold);
              expect(waiting.length).toBeLessThanOrEqual(maxQueueLength);
              for (const c of waiting) expect(now - c.arrivedAt).toBeLessThanOrEqual(maxQueueingTimeMs);
              for (const c of calls) {
                expect(c.settlements).toBeLessThanOrEqual(1);
                if (c.settledAt !== undefined && c.outcome !== 'aborted')
                  expect(c.settledAt - c.arrivedAt).toBeLessThanOrEqual(maxQueueingTimeMs);
              }
            };
            for (const s of steps) {
              if (s.op === 'arrive') {
                const controller = s.abortable ? new AbortController() : undefined;
                const rank = ranked ? PRIORITY_ORDER.indexOf(s.priority) : 0;
                const call: Call = { seq: calls.length, arrivedAt: clock.now(), controller, rank, settlements: 0 };
                calls.push(call);
                const settle = (outcome: Call['outcome'], entry?: Entry): void => {
                  call.settlements++;
                  call.settledAt = clock.now();
                  call.outcome = outcome;
                  if (entry !== undefined) {
                    call.entry = entry;
                    admitted.push(call.seq);
                  }
                };
                void fg.enter('r', { priority: s.priority, ...(controller ? { signal: controller.signal } : {}) }).then(
                  (entry) => settle('in', entry),
                  (error: unknown) =>
                    settle((error as { code?: string }).code === 'ERR_FLOW_BLOCKED' ? 'refused' : 'aborted'),
                );
              } else if (s.op === 'exit') {
                const running = calls.filter((c) => c.outcome === 'in' && !c.entry!.exited);
                running[s.pick % Math.max(1, running.length)]?.entry!.exit();
              } else if (s.op === 'abort') {
                const abortable = calls.filter((c) => c.outcome === undefined && c.controller !== undefined);
                abortable[s.pick % Math.max(1, abortable.length)]?.controller!.abort(new Error('abort'));
              } else {
                await clock.advance(s.ms);
              }
              await flush();
              check();
            }
            // Drain: every waiter is admitted or refused by its deadline.
            await clock.advance(maxQueueingTimeMs);
            await flush();
            check();
            expect(calls.filter((c) => c.outcome === undefined)).toEqual([]);
            expect(clock.pendingSleeps).toBe(0);
            // A call passes at once only when none waits, and waits behind every earlier call as
            // important as it (every earlier call, in a FIFO queue): of two admitted calls, the
            // earlier one as important as the later one was admitted first.
            const order = new Map(admitted.map((seq, i) => [seq, i]));
            for (const a of calls)
              for (const b of calls)
                if (a.seq < b.seq && a.rank <= b.rank && order.has(a.seq) && order.has(b.seq))
                  expect(order.get(a.seq)!).toBeLessThan(order.get(b.seq)!);
            for (const c of calls) if (c.outcome === 'in') c.entry!.exit();
            expect(fg.stats('r')!.concurrency).toBe(0);
          },
        ),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
