import fc from 'fast-check';
import { Floodgate, type Entry } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 100;

type Step =
  | { readonly op: 'arrive'; readonly abortable: boolean }
  | { readonly op: 'exit'; readonly pick: number }
  | { readonly op: 'abort'; readonly pick: number }
  | { readonly op: 'advance'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('arrive' as const), abortable: fc.boolean() }),
  fc.record({ op: fc.constant('exit' as const), pick: fc.nat(20) }),
  fc.record({ op: fc.constant('abort' as const), pick: fc.nat(20) }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }),
);

interface Call {
  readonly seq: number;
  readonly arrivedAt: number;
  readonly controller: AbortController | undefined;
  settledAt?: number;
  outcome?: 'in' | 'refused' | 'aborted';
  entry?: Entry;
  settlements: number;
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('property: concurrency rules with a queue', () => {
  it(
    'never run more than threshold nor queue more than maxQueueLength; each call is admitted or refused once, in order, within maxQueueingTimeMs',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: 1, max: 500 }),
          fc.array(step, { maxLength: 40 }),
          async (threshold, maxQueueLength, maxQueueingTimeMs, steps) => {
            const clock = new ManualClock();
            const fg = new Floodgate({ clock });
            fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold, maxQueueLength, maxQueueingTimeMs }]);
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
                const call: Call = { seq: calls.length, arrivedAt: clock.now(), controller, settlements: 0 };
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
                void fg.enter('r', controller ? { signal: controller.signal } : undefined).then(
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
            // FIFO: a call passes at once only when none waits, so calls are admitted in arrival order.
            expect(admitted).toEqual([...admitted].sort((a, b) => a - b));
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
