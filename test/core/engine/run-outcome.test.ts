import { getEventListeners } from 'node:events';
import { Floodgate, FlowBlockError, TimeoutError, type Entry } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { MAX_DURATION_MS } from '../../../packages/core/src/kernel/rule-reader';
import { sleepOnlyClock, throwingScheduleClock } from '../../support/own-clocks';

/** An engine on a manual clock whose resource `r` admits `limit` calls in flight. */
function concurrencyLimited(limit: number): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock();
  const fg = new Floodgate({ clock });
  fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: limit }]);
  return { fg, clock };
}

/** A promise that never settles. */
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** A promise to settle from the test: work that ignores its AbortSignal. */
class Deferred<T> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  constructor() {
    this.promise = new Promise<T>((resolve) => {
      this.resolve = resolve;
    });
  }
}

const predicateBroke = (): boolean => {
  throw new Error('predicate broke');
};

describe('a guarded call whose outcome cannot be read', () => {
  it('exits the entry when the exceptionsToIgnore predicate throws, and surfaces its error (#12)', async () => {
    const { fg } = concurrencyLimited(5);
    for (let i = 0; i < 5; i++) {
      await expect(
        fg.run('r', () => Promise.reject(new Error('down')), { exceptionsToIgnore: predicateBroke }),
      ).rejects.toThrow('predicate broke');
    }
    expect(fg.stats('r')!.concurrency).toBe(0);
    await expect(fg.run('r', () => 'next')).resolves.toBe('next');
  });

  it('exits the entry when the exceptionsToIgnore predicate throws on a sync failure', () => {
    const { fg } = concurrencyLimited(1);
    const fail = (): never => {
      throw new Error('down');
    };
    expect(() => fg.runSync('r', fail, { exceptionsToIgnore: predicateBroke })).toThrow('predicate broke');
    expect(fg.stats('r')).toMatchObject({ concurrency: 0, lastSecond: { error: 1 } });
  });

  it('exits the entry when the returned thenable’s then throws, and rejects with its error (#12)', async () => {
    const { fg } = concurrencyLimited(5);
    const broken = {
      then: () => {
        throw new Error('then broke');
      },
    };
    for (let i = 0; i < 5; i++)
      await expect(fg.run('r', () => broken as unknown as Promise<number>)).rejects.toThrow('then broke');
    expect(fg.stats('r')).toMatchObject({ concurrency: 0, lastSecond: { error: 5 } });
    await expect(fg.run('r', () => 'next')).resolves.toBe('next');
  });

  it('exits the entry when reading the returned value’s then throws, in runSync (#12)', () => {
    const { fg } = concurrencyLimited(1);
    const hostile = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('then getter broke');
      },
    });
    expect(() => fg.runSync('r', () => hostile)).toThrow('then getter broke');
    expect(fg.stats('r')!.concurrency).toBe(0);
    expect(fg.runSync('r', () => 'next')).toBe('next');
  });

  it('exits the entry when the fallback throws, and surfaces the fallback’s error', () => {
    const { fg } = concurrencyLimited(1);
    const fail = (): never => {
      throw new Error('down');
    };
    const fallback = (): never => {
      throw new Error('fallback broke');
    };
    expect(() => fg.runSync('r', fail, { fallback })).toThrow('fallback broke');
    expect(fg.stats('r')!.concurrency).toBe(0);
  });
});

describe('timeoutMs', () => {
  it('answers timed-out callers at the timeout but holds their slots until their functions settle (#24)', async () => {
    const { fg, clock } = concurrencyLimited(10);
    const work = Array.from({ length: 50 }, () => new Deferred<string>());
    let running = 0;
    let most = 0;
    const calls = work.map((w) =>
      fg
        .run(
          'r',
          async () => {
            most = Math.max(most, ++running);
            try {
              return await w.promise; // ignores its AbortSignal
            } finally {
              running--;
            }
          },
          { timeoutMs: 1000 },
        )
        .catch((e: unknown) => e),
    );
    await clock.advance(1000);
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((e) => e instanceof TimeoutError)).toHaveLength(10);
    expect(outcomes.filter((e) => e instanceof FlowBlockError)).toHaveLength(40);
    expect(fg.stats('r')!.concurrency).toBe(10);
    await expect(fg.run('r', () => 'next')).rejects.toBeInstanceOf(FlowBlockError);
    for (const w of work.slice(0, 3)) w.resolve('late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(running).toBe(7);
    expect(fg.stats('r')!.concurrency).toBe(7);
    await expect(fg.run('r', () => 'next')).resolves.toBe('next');
    expect(most).toBe(10);
  });

  it('keeps the slot of a function that never settles: at most the limit of them hold the resource (#24)', async () => {
    const { fg, clock } = concurrencyLimited(2);
    const calls = [1, 2].map(() => fg.run('r', () => never<string>(), { timeoutMs: 100 }).catch((e: unknown) => e));
    await clock.advance(100);
    expect(await Promise.all(calls)).toEqual([expect.any(TimeoutError), expect.any(TimeoutError)]);
    for (let i = 0; i < 5; i++) {
      await clock.advance(60_000);
      await expect(fg.run('r', () => 'next', { timeoutMs: 100 })).rejects.toBeInstanceOf(FlowBlockError);
    }
    expect(fg.stats('r')!.concurrency).toBe(2);
  });

  it('records the timeout at once, so a breaker opens at the timeout while the slot is held (#24)', async () => {
    const { fg, clock } = concurrencyLimited(5);
    fg.loadCircuitBreakerRules([
      { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const work = new Deferred<string>();
    const call = fg.run('r', () => work.promise, { timeoutMs: 100 }).catch((e: unknown) => e);
    await clock.advance(100);
    expect(await call).toBeInstanceOf(TimeoutError);
    expect(fg.circuitState('r')[0]!.state).toBe('open');
    expect(fg.stats('r')).toMatchObject({ concurrency: 1, lastSecond: { error: 1, totalRtMs: 100 } });
    work.resolve('late');
    await clock.advance(0);
    expect(fg.stats('r')).toMatchObject({ concurrency: 0, lastSecond: { error: 1, success: 1, totalRtMs: 100 } });
  });

  it('decides a half-open probe at its timeout, while its function runs on (#24)', async () => {
    const { fg, clock } = concurrencyLimited(5);
    fg.loadCircuitBreakerRules([
      { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    await expect(fg.run('r', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await clock.advance(1000);
    const probe = fg.run('r', () => never<string>(), { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(fg.circuitState('r')[0]!.state).toBe('halfOpen');
    await clock.advance(100);
    expect(await probe).toBeInstanceOf(TimeoutError);
    expect(fg.circuitState('r')[0]).toMatchObject({ state: 'open', retryAfterMs: 1000 });
    expect(fg.stats('r')!.concurrency).toBe(1);
  });

  it('holds the hotspot, origin and inbound counts of a timed-out call until its function settles (#24)', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.loadRules({
      hotParams: [{ resource: 'h', paramIndex: 0, metric: 'concurrency', threshold: 1 }],
      system: [{ maxConcurrency: 1 }],
    });
    const work = new Deferred<string>();
    const options = { args: ['u1'], origin: 'app', inbound: true, timeoutMs: 100 } as const;
    const call = fg.run('h', () => work.promise, options).catch((e: unknown) => e);
    await clock.advance(100);
    expect(await call).toBeInstanceOf(TimeoutError);
    await expect(fg.run('h', () => 'next', { args: ['u1'] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
    await expect(fg.run('other', () => 'next', { inbound: true })).rejects.toMatchObject({
      code: 'ERR_SYSTEM_BLOCKED',
    });
    expect(fg.inboundStats().concurrency).toBe(1);
    work.resolve('late');
    await clock.advance(0);
    expect(fg.inboundStats().concurrency).toBe(0);
    await expect(fg.run('h', () => 'next', options)).resolves.toBe('next');
  });

  it('answers with a TimeoutError naming the resource and the timeout', async () => {
    const { fg, clock } = concurrencyLimited(1);
    const call = expect(fg.run('r', () => never(), { timeoutMs: 250 })).rejects.toMatchObject({
      name: 'TimeoutError',
      code: 'ERR_TIMEOUT',
      resource: 'r',
      timeoutMs: 250,
      message: '"r" did not settle within 250 ms',
    });
    await clock.advance(250);
    await call;
  });

  it('aborts the signal the function receives, at the timeout, with the TimeoutError (#12)', async () => {
    const { fg, clock } = concurrencyLimited(1);
    let received: AbortSignal | undefined;
    const call = fg
      .run(
        'r',
        (_entry, signal) => {
          received = signal;
          return never();
        },
        { timeoutMs: 100 },
      )
      .catch((e: unknown) => e);
    expect(received!.aborted).toBe(false);
    await clock.advance(100);
    expect(received!.aborted).toBe(true);
    expect(received!.reason).toBeInstanceOf(TimeoutError);
    expect(await call).toBe(received!.reason);
  });

  it('unlinks the caller’s signal when the call settles, and at its timeout (#24)', async () => {
    const { fg, clock } = concurrencyLimited(5);
    const caller = new AbortController();
    const options = { timeoutMs: 100, signal: caller.signal };
    await fg.run('r', () => Promise.resolve(1), options);
    await fg.run('r', () => 1, options);
    await expect(
      fg.run(
        'r',
        () => {
          throw new Error('down');
        },
        options,
      ),
    ).rejects.toThrow('down');
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    const hung = fg.run('r', () => never(), { timeoutMs: 100, signal: caller.signal }).catch((e: unknown) => e);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    await clock.advance(100);
    expect(await hung).toBeInstanceOf(TimeoutError);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the function’s signal at once when the caller’s signal aborted before the call', async () => {
    const { fg } = concurrencyLimited(1);
    fg.loadFlowRules([{ resource: 'q', behavior: 'throttle', threshold: 1, maxQueueingTimeMs: 1000 }]);
    const caller = new AbortController();
    let received: AbortSignal | undefined;
    // Admitted by enter(), then the caller's signal aborts before the function is called.
    const call = fg.run(
      'q',
      (_entry, signal) => {
        received = signal;
        return 1;
      },
      { timeoutMs: 100, signal: caller.signal },
    );
    caller.abort(new Error('gone'));
    await call;
    expect(received!.reason).toEqual(new Error('gone'));
  });

  it('also aborts the function’s signal when the caller’s signal aborts', async () => {
    const { fg } = concurrencyLimited(1);
    const caller = new AbortController();
    let received: AbortSignal | undefined;
    void fg.run(
      'r',
      (_entry, signal) => {
        received = signal;
        return never();
      },
      { timeoutMs: 100, signal: caller.signal },
    );
    caller.abort(new Error('client left'));
    expect(received!.reason).toEqual(new Error('client left'));
  });

  it('records the call at the timeout, whatever the function does later (#12)', async () => {
    const { fg, clock } = concurrencyLimited(1);
    let finish!: (value: string) => void;
    const call = expect(
      fg.run('r', () => new Promise<string>((resolve) => (finish = resolve)), { timeoutMs: 100 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(100);
    await call;
    await clock.advance(400);
    finish('late');
    await clock.advance(0);
    expect(fg.totals('r')).toMatchObject({ success: 1, error: 1, timeout: 1, rtSumMs: 100 });
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('gives the TimeoutError to the fallback', async () => {
    const { fg, clock } = concurrencyLimited(1);
    const call = fg.run('r', () => never<string>(), {
      timeoutMs: 100,
      fallback: (e) => `fallback:${(e as TimeoutError).code}`,
    });
    await clock.advance(100);
    await expect(call).resolves.toBe('fallback:ERR_TIMEOUT');
  });

  it('rethrows a TimeoutError the caller ignores, untraced', async () => {
    const { fg, clock } = concurrencyLimited(1);
    const call = expect(
      fg.run('r', () => never<string>(), { timeoutMs: 100, exceptionsToIgnore: [TimeoutError] }),
    ).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(100);
    await call;
    expect(fg.totals('r')).toMatchObject({ error: 0, timeout: 0 });
  });

  it('counts a timeout as a failure for error breakers (#12)', async () => {
    const { fg, clock } = concurrencyLimited(10);
    fg.loadCircuitBreakerRules([
      { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const call = expect(fg.run('r', () => never(), { timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(100);
    await call;
    expect(fg.circuitState('r')[0]!.state).toBe('open');
  });

  it('counts a timeout as a slow call for slow-call breakers (#12)', async () => {
    const { fg, clock } = concurrencyLimited(10);
    fg.loadCircuitBreakerRules([
      {
        resource: 'r',
        strategy: 'slowRequestRatio',
        threshold: 0.5,
        maxAllowedRtMs: 50,
        minRequestAmount: 1,
        retryTimeoutMs: 1000,
      },
    ]);
    const call = expect(
      fg.run('r', () => never(), { timeoutMs: 100, exceptionsToIgnore: [TimeoutError] }),
    ).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(100);
    await call;
    expect(fg.circuitState('r')[0]!.state).toBe('open');
  });

  it('settles a call that settles in time as usual, and cancels its timer', async () => {
    const { fg, clock } = concurrencyLimited(1);
    const call = fg.run(
      'r',
      async () => {
        await clock.sleep(50);
        return 'done';
      },
      { timeoutMs: 100 },
    );
    await clock.advance(50);
    await expect(call).resolves.toBe('done');
    expect(clock.pendingSleeps).toBe(0);
    expect(fg.totals('r')).toMatchObject({ success: 1, timeout: 0, rtSumMs: 50 });
  });

  it('times out, and cancels its timer, on a clock of its own without schedule (through sleep)', async () => {
    const manual = new ManualClock();
    const clock = sleepOnlyClock(manual);
    const fg = new Floodgate({ clock });
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 2 }]);
    const inTime = fg.run('r', () => manual.sleep(50).then(() => 'done'), { timeoutMs: 100 });
    const late = fg.run('r', () => never<string>(), { timeoutMs: 100 }).catch((error: unknown) => error);
    await manual.advance(50);
    await expect(inTime).resolves.toBe('done');
    expect(manual.pendingSleeps).toBe(1);
    await manual.advance(50);
    expect(await late).toBeInstanceOf(TimeoutError);
    expect(manual.pendingSleeps).toBe(0);
    expect(fg.totals('r')).toMatchObject({ timeout: 1 });
  });

  it('rejects with the error of a clock whose schedule throws, and still gives back the slot', async () => {
    const manual = new ManualClock();
    const broken = throwingScheduleClock(manual, 'clock broke');
    const fg = new Floodgate({ clock: broken });
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 1 }]);
    const work = new Deferred<string>();
    const call = fg.run('r', () => work.promise, { timeoutMs: 100 });
    await expect(call).rejects.toThrow('clock broke');
    expect(fg.stats('r')!.concurrency).toBe(1);
    work.resolve('done');
    await new Promise((resolve) => setImmediate(resolve));
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('times out a promise that runSync’s function returns, holding its slot until it settles', async () => {
    const { fg, clock } = concurrencyLimited(1);
    const work = new Deferred<string>();
    const call = expect(fg.runSync('r', () => work.promise, { timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(100);
    await call;
    expect(fg.stats('r')!.concurrency).toBe(1);
    work.resolve('late');
    await clock.advance(0);
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('never times out a sync result', () => {
    const { fg, clock } = concurrencyLimited(1);
    expect(fg.runSync('r', () => 'now', { timeoutMs: 1 })).toBe('now');
    expect(clock.pendingSleeps).toBe(0);
  });

  it('counts the timeout from when the function starts, after any queueing wait', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.loadFlowRules([{ resource: 'q', behavior: 'throttle', threshold: 10, maxQueueingTimeMs: 1000 }]);
    fg.entry('q').exit();
    let started: number | undefined;
    const call = expect(
      fg.run(
        'q',
        (entry: Entry) => {
          started = entry.createdAt;
          return never();
        },
        { timeoutMs: 50 },
      ),
    ).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(100);
    expect(started).toBe(100);
    await clock.advance(49);
    expect(fg.stats('q')!.concurrency).toBe(1);
    await clock.advance(1);
    await call;
  });

  it('has no timeout by default (#12)', async () => {
    const { fg, clock } = concurrencyLimited(1);
    void fg.run('r', () => never());
    await clock.advance(MAX_DURATION_MS);
    expect(clock.pendingSleeps).toBe(0);
    expect(fg.stats('r')!.concurrency).toBe(1);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, MAX_DURATION_MS + 1, '100'])(
    'refuses a timeoutMs of %p',
    async (timeoutMs) => {
      const { fg } = concurrencyLimited(1);
      const message = /^timeoutMs must be a number > 0 and <= 2147483647, got /;
      await expect(fg.run('r', () => 1, { timeoutMs } as never)).rejects.toThrow(message);
      expect(() => fg.runSync('r', () => 1, { timeoutMs } as never)).toThrow(message);
      expect(fg.stats('r')!.lastSecond.pass).toBe(0);
    },
  );
});
