/**
 * The client interceptor's retries (gRFC A6 as it fits an interceptor) on real grpc-js servers
 * and clients over loopback: only retryable codes, only before the answer reached the caller,
 * backoff with full jitter on the engine's clock (a ManualClock) and random source, the server's
 * pushback honoured, the call's deadline respected, and every retry spending the method's retry
 * budget (core's `retryBudgets` kind), so a failing server sees at most about 1.2× the calls
 * offered.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { Floodgate, UpstreamPausedError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { blockErrorOf, clientInterceptor, type ClientInterceptorOptions } from '@floodgate/grpc';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { until } from '../support/until';
import {
  clientTestbed,
  echoClient,
  PATHS,
  sayOutcome,
  startEchoServer,
  statusOf,
  type EchoClient,
  type ScriptedOutcome,
} from './grpc-harness';

const { OK, UNAVAILABLE, INTERNAL, DEADLINE_EXCEEDED } = grpc.status;

/**
 * Waits for `promise` while real I/O runs, waking the clock's waits that are due now (0 ms
 * backoffs, with a random source drawing 0) and nothing later: a test moves time itself.
 */
async function settle<T>(clock: ManualClock, promise: Promise<T>): Promise<T> {
  let done = false;
  const settled = promise.finally(() => (done = true));
  const deadline = Date.now() + 5000;
  while (!done) {
    if (Date.now() > deadline) throw new Error('the call did not settle within 5 s');
    await new Promise((resolve) => setImmediate(resolve));
    if (clock.pendingSleeps > 0) await clock.advance(0);
  }
  return settled;
}

describe('clientInterceptor retries', () => {
  let clock: ManualClock;
  let draw: { next: number };
  let fg: Floodgate;
  const bed = clientTestbed(() => fg);

  beforeEach(() => {
    clock = new ManualClock(1000);
    draw = { next: 0 };
    fg = new Floodgate({ clock, random: () => draw.next });
  });

  /** A client through the interceptor (retries on by default), and the resource of its Say method. */
  async function connect(
    options: Omit<ClientInterceptorOptions, 'floodgate' | 'target'> = { retry: {} },
  ): Promise<{ c: EchoClient; resource: string }> {
    const { c, resource } = await bed.connect(options);
    return { c, resource: resource(PATHS.say) };
  }

  const script = (...outcomes: ScriptedOutcome[]): void => void bed.server.script.push(...outcomes);

  it('retries UNAVAILABLE after a backoff with full jitter on the engine clock, and answers with the retry', async () => {
    const { c, resource } = await connect({ retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300 } });
    script({ code: UNAVAILABLE }, { code: UNAVAILABLE }, { code: UNAVAILABLE });
    draw.next = 0.5;
    const pending = sayOutcome(c, { text: 'script' });
    for (const expected of [50, 100, 150]) {
      const seen = bed.server.handled.say;
      await until(() => clock.pendingSleeps === 1 && bed.server.handled.say === seen + 1, 'an attempt failed');
      await clock.advance(expected - 1);
      expect(bed.server.handled.say).toBe(seen + 1);
      await clock.advance(1);
    }
    expect((await pending).reply?.text).toBe('script');
    expect(bed.server.handled.say).toBe(4);
    expect(fg.totals(resource)).toMatchObject({ pass: 4, error: 3, success: 4 }); // success counts completions;
  });

  it('does not retry a status outside statusCodes', async () => {
    const { c, resource } = await connect();
    const { error } = await sayOutcome(c, { text: `fail:${INTERNAL}` });
    expect(error?.code).toBe(INTERNAL);
    expect(bed.server.handled.say).toBe(1);
    expect(clock.pendingSleeps).toBe(0);
    expect(fg.retryBudgets(resource)[0]?.balance).toBe(100); // nothing withdrawn
  });

  it('retries the codes listed in statusCodes', async () => {
    const { c } = await connect({ retry: { statusCodes: [INTERNAL] } });
    script({ code: INTERNAL });
    expect((await settle(clock, sayOutcome(c, { text: 'script' }))).reply?.text).toBe('script');
    script({ code: UNAVAILABLE });
    expect((await settle(clock, sayOutcome(c, { text: 'script' }))).error?.code).toBe(UNAVAILABLE);
    expect(bed.server.handled.say).toBe(3);
  });

  it('retries at most maxRetries times, then answers the last status as it came', async () => {
    const { c } = await connect({ retry: { maxRetries: 2 } });
    const { error } = await settle(clock, sayOutcome(c, { text: `fail:${UNAVAILABLE}` }));
    expect(error?.code).toBe(UNAVAILABLE);
    expect(error?.details).toBe('failed with UNAVAILABLE');
    expect(bed.server.handled.say).toBe(3);
  });

  it('sends no retry unless retry is set', async () => {
    const { c } = await connect({});
    await sayOutcome(c, { text: `fail:${UNAVAILABLE}` });
    expect(bed.server.handled.say).toBe(1);
    expect(fg.getRules().retryBudgets).toEqual([]);
  });

  it('waits out the server’s pushback before the retry, and pauses the method meanwhile', async () => {
    const { c, resource } = await connect();
    script({ code: UNAVAILABLE, pushback: '300' });
    const pending = sayOutcome(c, { text: 'script' });
    await until(() => clock.pendingSleeps === 1, 'the retry waiting');
    const other = await sayOutcome(c, { text: 'other' });
    expect(blockErrorOf(other.error)).toBeInstanceOf(UpstreamPausedError);
    expect(blockErrorOf(other.error)?.retryAfterMs).toBe(300);
    await clock.advance(299);
    expect(bed.server.handled.say).toBe(1);
    await clock.advance(1);
    expect((await pending).reply?.text).toBe('script');
    expect(bed.server.handled.say).toBe(2);
    expect(fg.totals(resource)).toMatchObject({ pass: 2, block: 1, success: 2, error: 1 });
  });

  it('never retries after a negative or malformed pushback (gRFC A6: the server says do not retry)', async () => {
    const { c } = await connect();
    for (const pushback of ['-1', 'soon', '1.5']) {
      script({ code: UNAVAILABLE, pushback });
      const { error } = await sayOutcome(c, { text: 'script' });
      expect(error?.code).toBe(UNAVAILABLE);
    }
    expect(bed.server.handled.say).toBe(3);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('does not retry when the server asks for a pushback over maxPushbackMs', async () => {
    const { c } = await connect({ retry: {}, maxPushbackMs: 1000 });
    script({ code: UNAVAILABLE, pushback: '5000' });
    expect((await sayOutcome(c, { text: 'script' })).error?.code).toBe(UNAVAILABLE);
    expect(bed.server.handled.say).toBe(1);
  });

  it('does not retry when the wait would pass the call’s deadline', async () => {
    const { c } = await connect();
    script({ code: UNAVAILABLE, pushback: '5000' });
    const deadline = Date.now() + 2000;
    expect((await sayOutcome(c, { text: 'script' }, new grpc.Metadata(), { deadline })).error?.code).toBe(UNAVAILABLE);
    expect(bed.server.handled.say).toBe(1);
    script({ code: UNAVAILABLE });
    draw.next = 0.99;
    const slow = echoClient(bed.server.address, [
      clientInterceptor({
        floodgate: fg,
        target: 'slow',
        retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 },
      }),
    ]);
    try {
      const { error } = await sayOutcome(slow, { text: 'script' }, new grpc.Metadata(), {
        deadline: Date.now() + 2000,
      });
      expect(error?.code).toBe(UNAVAILABLE);
    } finally {
      slow.close();
    }
    expect(bed.server.handled.say).toBe(2);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('answers a caller who cancels during the backoff with CANCELLED, and sends no retry', async () => {
    const { c, resource } = await connect();
    script({ code: UNAVAILABLE, pushback: '1000' });
    const call = c.say({ text: 'script' }, () => undefined);
    const status = statusOf(call);
    await until(() => clock.pendingSleeps === 1, 'the retry waiting');
    call.cancel();
    expect((await status).code).toBe(grpc.status.CANCELLED);
    expect(clock.pendingSleeps).toBe(0);
    await clock.advance(1000);
    expect(bed.server.handled.say).toBe(1);
    expect(fg.totals(resource)).toMatchObject({ pass: 1 });
  });

  it('never retries a server stream once a message arrived, and only with serverStreaming', async () => {
    const { c } = await connect({ retry: { serverStreaming: true } });
    script({ code: UNAVAILABLE, messages: 1 });
    const received: number[] = [];
    const committed = c.count({ text: 'script' });
    committed.on('data', (reply: { index: number }) => received.push(reply.index));
    expect((await statusOf(committed)).code).toBe(UNAVAILABLE);
    expect(received).toEqual([0]);
    expect(bed.server.handled.count).toBe(1);
    script({ code: UNAVAILABLE });
    const retried = c.count({ text: 'script' });
    retried.on('data', () => undefined);
    expect((await settle(clock, statusOf(retried))).code).toBe(OK);
    expect(bed.server.handled.count).toBe(3);
  });

  it('does not retry a server stream without serverStreaming', async () => {
    const { c } = await connect({ retry: {} });
    script({ code: UNAVAILABLE });
    const stream = c.count({ text: 'script' });
    stream.on('data', () => undefined);
    expect((await statusOf(stream)).code).toBe(UNAVAILABLE);
    expect(bed.server.handled.count).toBe(1);
  });

  it('never retries a client stream or a bidi stream', async () => {
    const { c } = await connect({ retry: { serverStreaming: true } });
    const collected = await new Promise<grpc.ServiceError | null>((resolve) => {
      const call = c.collect((error) => resolve(error));
      call.write({ text: `fail:${UNAVAILABLE}` });
      call.end();
    });
    expect(collected?.code).toBe(UNAVAILABLE);
    expect(bed.server.handled.collect).toBe(1);
  });

  it('answers the last status when the budget is spent, and counts the refused retry as a block', async () => {
    const { c, resource } = await connect({ retry: { budget: { minRetriesPerSecond: 0, retryRatio: 0.5 } } });
    // First call: half a retry earned, none may be sent.
    expect((await settle(clock, sayOutcome(c, { text: `fail:${UNAVAILABLE}` }))).error?.code).toBe(UNAVAILABLE);
    expect(bed.server.handled.say).toBe(1);
    // Second call: one retry earned.
    await settle(clock, sayOutcome(c, { text: `fail:${UNAVAILABLE}` }));
    expect(bed.server.handled.say).toBe(3);
    expect(fg.blocksByRule(resource)).toEqual([{ kind: 'retryBudget', ruleId: 'retryBudget#0', count: 2 }]);
  });

  it('holds a server that always fails to at most 1.2× the calls offered plus the budget’s floor', async () => {
    const { c, resource } = await connect({ retry: { maxRetries: 4 } });
    const offered = 300;
    for (let batch = 0; batch < offered / 50; batch++)
      await settle(
        clock,
        Promise.all(Array.from({ length: 50 }, () => sayOutcome(c, { text: `fail:${UNAVAILABLE}` }))),
      );
    // Finagle's defaults: 20 % of the first attempts, plus 10 retries a second over 10 s (a floor of 100).
    const seen = bed.server.handled.say;
    expect(seen).toBeGreaterThan(offered);
    expect(seen).toBeLessThanOrEqual(offered * 1.2 + 100);
    expect(fg.retryBudgets(resource)[0]?.balance).toBe(0);
    // Without the budget, 4 retries a call would have sent 5× the calls.
  });

  it('holds it to 1.2× the calls offered with no floor', async () => {
    const { c } = await connect({ retry: { maxRetries: 4, budget: { minRetriesPerSecond: 0 } } });
    const offered = 300;
    for (let batch = 0; batch < offered / 50; batch++)
      await settle(
        clock,
        Promise.all(Array.from({ length: 50 }, () => sayOutcome(c, { text: `fail:${UNAVAILABLE}` }))),
      );
    expect(bed.server.handled.say).toBeGreaterThan(offered);
    expect(bed.server.handled.say / offered).toBeLessThanOrEqual(1.2);
  });

  it('adds adaptive throttling on each method when asked', async () => {
    const { c } = await connect({ adaptiveThrottling: { k: 1.5 } });
    expect(fg.getRules().adaptiveThrottling).toEqual([]);
    await sayOutcome(c, { text: 'a' });
    expect(fg.getRules().adaptiveThrottling).toEqual([
      { resource: `${bed.server.address}${PATHS.say}`, k: 1.5, windowMs: 120_000 },
    ]);
  });

  it('names every bad retry option', () => {
    expect(() =>
      clientInterceptor({
        floodgate: fg,
        target: 't',
        retry: { maxRetries: 9, statusCodes: [0], serverStreaming: 'yes', budget: { retryRatio: -1 }, tries: 1 },
        adaptiveThrottling: { k: 0 },
      } as unknown as ClientInterceptorOptions),
    ).toThrow(
      expect.objectContaining({
        issues: [
          { path: 'retry.tries', message: expect.stringContaining('is not a retry option') },
          { path: 'retry.statusCodes[0]', message: 'must be a status code within [1, 16], got 0' },
          { path: 'retry.serverStreaming', message: 'must be a boolean, got "yes"' },
          { path: 'retry.budget.retryRatio', message: expect.stringContaining('-1') },
          { path: 'retry.maxRetries', message: 'must be an integer within [0, 4], got 9' },
          { path: 'adaptiveThrottling.k', message: expect.stringContaining('0') },
        ],
      }),
    );
  });

  /** Retries are counted exactly as a model of the budget says, and stay within its bound. */
  it(
    'sends exactly the retries a Finagle budget allows over any sequence of failures, within its bound',
    async () => {
      const outcome = fc.oneof(
        fc.constant<ScriptedOutcome>({ code: OK }),
        fc.constant<ScriptedOutcome>({ code: UNAVAILABLE }),
        fc.constant<ScriptedOutcome>({ code: UNAVAILABLE }),
        fc.constant<ScriptedOutcome>({ code: INTERNAL }),
        fc.constant<ScriptedOutcome>({ code: DEADLINE_EXCEEDED }),
        fc.constant<ScriptedOutcome>({ code: UNAVAILABLE, pushback: '-1' }),
        fc.constant<ScriptedOutcome>({ code: UNAVAILABLE, pushback: '0' }),
      );
      const budget = fc.record({
        retryRatio: fc.constantFrom(0, 0.1, 0.2, 0.5, 1),
        minRetriesPerSecond: fc.constantFrom(0, 0.1, 0.3),
      });
      const runs = propertyRuns(15);
      const engineClock = new ManualClock(0);
      const engine = new Floodgate({ clock: engineClock, random: () => 0 });
      const echo = await startEchoServer();
      try {
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.array(outcome, { minLength: 1, maxLength: 40 }),
            fc.integer({ min: 1, max: 12 }),
            fc.integer({ min: 0, max: 4 }),
            budget,
            async (outcomes, calls, maxRetries, rule) => {
              const target = `run-${run++}`;
              const stub = echoClient(echo.address, [
                clientInterceptor({ floodgate: engine, target, retry: { maxRetries, budget: rule } }),
              ]);
              try {
                echo.script.splice(0, echo.script.length, ...outcomes);
                const before = echo.handled.say;
                for (let i = 0; i < calls; i++) await settle(engineClock, sayOutcome(stub, { text: 'script' }));
                const attempts = echo.handled.say - before;
                // The model: Finagle's budget over one window (the clock does not move).
                const reserve = (rule.minRetriesPerSecond * 10_000) / 1000;
                let deposits = 0;
                let withdrawals = 0;
                let next = 0;
                let expected = 0;
                for (let i = 0; i < calls; i++) {
                  deposits++;
                  expected++;
                  let last = outcomes[next++];
                  let retries = 0;
                  while (
                    last?.code === UNAVAILABLE &&
                    last.pushback !== '-1' &&
                    retries < maxRetries &&
                    Math.floor(reserve + rule.retryRatio * deposits - withdrawals + 1e-9) >= 1
                  ) {
                    withdrawals++;
                    retries++;
                    expected++;
                    last = outcomes[next++];
                  }
                }
                expect(attempts).toBe(expected);
                expect(attempts - calls).toBeLessThanOrEqual(Math.floor(reserve + rule.retryRatio * calls + 1e-9));
                expect(attempts).toBeLessThanOrEqual(calls * (1 + maxRetries));
                expect(engine.stats(`${target}${PATHS.say}`)?.concurrency ?? 0).toBe(0);
              } finally {
                stub.close();
              }
            },
          ),
          runs,
        );
      } finally {
        await echo.close();
      }
    },
    propertyTimeoutMs(15),
  );
});
