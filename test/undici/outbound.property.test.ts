import { Entry, type EntryOptions } from '@floodgate/core';
import fc from 'fast-check';
import { request } from 'undici';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { Harness, waitFor } from './harness';
import type { Behaviour } from './upstream';

const RETRY_RATIO = 0.5;
const MIN_RETRIES_PER_SECOND = 0;
const TTL_MS = 1000;

const behaviour: fc.Arbitrary<Behaviour> = fc.constantFrom<Behaviour>(
  { status: 200, body: 'ok' },
  { status: 200, body: 'x'.repeat(100_000) },
  { status: 500 },
  { status: 503 },
  { status: 503, headers: { 'retry-after': '1' } },
  { status: 429, headers: { 'retry-after': '0' } },
  { status: 404 },
  'reset',
  'hang',
);
const step = fc.oneof(fc.record({ advance: fc.integer({ min: 0, max: 300 }) }), fc.constant({ abort: true as const }));
const call = fc.record({
  answers: fc.array(behaviour, { maxLength: 5 }),
  steps: fc.array(step, { maxLength: 6 }),
  hedge: fc.boolean(),
});

/** Lets real I/O run a while (a bounded number of event-loop turns). */
async function io(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Sequences of upstream outcomes (answers, errors, resets, hangs), caller aborts and clock
 * advances, through real undici and a real server: whatever happens, retries and hedges never
 * exceed the retry budget, and when a call has settled no entry of it is in flight, no wait of it
 * is pending (the guard's own deadline lanes end within their delay), and (once the sockets have
 * closed) neither the agent nor the upstream has a request of it running.
 */
describe('outbound calls, as a property', () => {
  it(
    'keep retries within the budget and leave no entry, timer or socket behind',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 6 }), async (calls) => {
          const h = new Harness();
          h.draw.next = 0.5;
          try {
            const upstream = (await h.upstream()).always({ status: 200, body: 'ok' });
            const policy = {
              timeoutMs: 100,
              retry: {
                maxRetries: 3,
                baseDelayMs: 20,
                maxDelayMs: 100,
                maxRetryAfterMs: 2000,
                budget: { retryRatio: RETRY_RATIO, minRetriesPerSecond: MIN_RETRIES_PER_SECOND, ttlMs: TTL_MS },
              },
              pushback: { maxPauseMs: 1500 },
              circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, minRequestAmount: 5, retryTimeoutMs: 500 },
            } as const;
            const { agent, dispatcher } = h.agent({
              ...policy,
              hosts: { [upstream.host]: { routes: { 'GET /hedged': { hedge: { delayMs: 30 } } } } },
            });
            // Every attempt the guard asks the engine for: its kind, its time, and whether it was admitted.
            const asked: { attempt: string; at: number; admitted: boolean }[] = [];
            const tryEntry = h.fg.tryEntry.bind(h.fg);
            h.fg.tryEntry = (resource: string, options?: EntryOptions) => {
              const result = tryEntry(resource, options);
              asked.push({
                attempt: options?.attempt ?? 'first',
                at: h.clock.now(),
                admitted: result instanceof Entry,
              });
              return result;
            };
            for (const { answers, steps, hedge } of calls) {
              upstream.script(...answers);
              const controller = new AbortController();
              let settled = false;
              const pending = request(`${upstream.origin}${hedge ? '/hedged' : '/plain'}`, {
                dispatcher,
                signal: controller.signal,
              })
                .then((res) => res.body.text())
                .catch((error: unknown) => error)
                .finally(() => (settled = true));
              for (const next of steps) {
                await io();
                if (settled) break;
                if ('abort' in next) controller.abort(new Error('the caller gave up'));
                else await h.clock.advance(next.advance);
              }
              for (let i = 0; i < 200 && !settled; i++) {
                await io();
                if (!settled) await h.clock.advance(100);
              }
              await pending;
              expect(settled).toBe(true);
              // Nothing of the call outlives it: no entry in flight; of the clock's waits, at most the
              // guard's two lanes (timeouts, hedges: no wait per call), and none once their delays pass.
              for (const resource of h.fg.resourceNames()) expect(h.concurrency(resource)).toBe(0);
              expect(h.clock.pendingSleeps).toBeLessThanOrEqual(2);
              await h.clock.advance(policy.timeoutMs);
              expect(h.clock.pendingSleeps).toBe(0);
              // Leave the pushback pause and the breaker's open period behind, for the next call.
              await h.clock.advance(600);
              upstream.release();
            }
            // Sockets: no request is left running, at the agent or at the upstream.
            await waitFor(() => upstream.inFlight === 0);
            await waitFor(() =>
              Object.values(agent.stats).every((stats) => stats.running === 0 && stats.pending === 0),
            );
            // The budget: each retry or hedge admitted fits the window of ten buckets up to its own.
            const bucketMs = TTL_MS / 10;
            const reserve = (MIN_RETRIES_PER_SECOND * TTL_MS) / 1000;
            const admitted = asked.filter((a) => a.admitted);
            admitted.forEach((a, i) => {
              if (a.attempt === 'first') return;
              const bucket = Math.floor(a.at / bucketMs);
              const window = admitted.slice(0, i + 1).filter((b) => Math.floor(b.at / bucketMs) > bucket - 10);
              const firsts = window.filter((b) => b.attempt === 'first').length;
              expect(window.length - firsts).toBeLessThanOrEqual(reserve + RETRY_RATIO * firsts + 1e-9);
            });
            // And the upstream saw no more than what was admitted.
            expect(upstream.hits).toBeLessThanOrEqual(admitted.length);
          } finally {
            await h.close();
          }
        }),
        propertyRuns(40),
      );
    },
    propertyTimeoutMs(40),
  );
});
