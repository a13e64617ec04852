import { FlowBlockError, type Entry } from '@floodgate/core';
import { MAX_DURATION_MS } from '../../../packages/core/src/kernel/rule-reader';
import { engineWith } from './helpers';

const passes = (result: unknown): boolean => !(result instanceof FlowBlockError);

describe('QPS throttle (ThrottlingController)', () => {
  it('spaces sync calls 1000 × acquireCount / threshold ms apart', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    expect(passes(fg.tryEntry('r'))).toBe(true);
    await clock.advance(99);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: 1 });
    await clock.advance(1);
    expect(passes(fg.tryEntry('r'))).toBe(true);
    expect(passes(fg.tryEntry('r', { acquireCount: 0 }))).toBe(true);
  });

  it('charges a call taking two tokens two intervals after the previous pass', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    fg.entry('r');
    await clock.advance(199);
    expect(passes(fg.tryEntry('r', { acquireCount: 2 }))).toBe(false);
    expect(passes(fg.tryEntry('r'))).toBe(true);
    await clock.advance(200);
    expect(passes(fg.tryEntry('r', { acquireCount: 2 }))).toBe(true);
  });

  it('paces fractionally above 1000 calls per second', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 4000 }]);
    let passed = 0;
    for (let i = 0; i < 4000; i++) {
      if (passes(fg.tryEntry('r'))) passed++;
      if (passes(fg.tryEntry('r'))) passed++;
      await clock.advance(0.25);
    }
    expect(passed).toBe(4000);
  });

  it('blocks a call whose slot is further away than any timer can wait, instead of admitting it at once', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'throttle', threshold: 1e-6, maxQueueingTimeMs: MAX_DURATION_MS },
    ]);
    (await fg.enter('r')).exit();
    // Ten tokens at one per 10^9 ms: the slot is 10^10 ms away.
    await expect(fg.enter('r', { acquireCount: 10 })).rejects.toMatchObject({
      code: 'ERR_FLOW_BLOCKED',
      retryAfterMs: 1e10 - MAX_DURATION_MS,
    });
    expect(clock.pendingSleeps).toBe(0);
  });

  it('queues enter() calls one slot apart, up to maxQueueingTimeMs', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10, maxQueueingTimeMs: 250 }]);
    const admitted: number[] = [];
    const enter = (): Promise<void> => fg.enter('r').then((entry) => void admitted.push(entry.createdAt));
    const calls = [enter(), enter(), enter()];
    const fourth = fg.enter('r');
    await expect(fourth).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: 50 });
    await clock.advance(200);
    await Promise.all(calls);
    expect(admitted).toEqual([0, 100, 200]);
  });

  it('queues an enter() whose slot is only 1 ms away', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    (await fg.enter('r')).exit();
    await clock.advance(99);
    const next = fg.enter('r');
    await clock.advance(1);
    expect((await next).createdAt).toBe(100);
  });

  it('queues a call whose wait is exactly maxQueueingTimeMs, and refuses one a slot further, as Sentinel', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10, maxQueueingTimeMs: 200 }]);
    const calls = [fg.enter('r'), fg.enter('r'), fg.enter('r')];
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: 100 });
    await clock.advance(200);
    expect((await Promise.all(calls)).map((entry) => entry.createdAt)).toEqual([0, 100, 200]);
  });

  it('makes enter() wait only for a rule with a queue (resourceInfo().mayWait, which adapters read)', () => {
    const { fg } = engineWith([
      { resource: 'reject', threshold: 10 },
      { resource: 'no-queue', behavior: 'throttle', threshold: 10, maxQueueingTimeMs: 0 },
      { resource: 'queue', behavior: 'throttle', threshold: 10 },
      { resource: 'warm-queue', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 1000 },
    ]);
    const mayWait = (resource: string): boolean => fg.resourceInfo(resource).mayWait;
    expect(['reject', 'no-queue', 'queue', 'warm-queue'].map(mayWait)).toEqual([false, false, true, true]);
  });

  it('never waits in a sync entry()', () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    fg.entry('r');
    expect(() => fg.entry('r')).toThrow(FlowBlockError);
  });

  it('gives the slot back when a queued enter() is aborted', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    await fg.enter('r');
    const controller = new AbortController();
    const queued = fg.enter('r', { signal: controller.signal });
    controller.abort(new Error('client left'));
    await expect(queued).rejects.toThrow('client left');
    let admittedAt: number | undefined;
    const next = fg.enter('r').then((entry: Entry) => (admittedAt = entry.createdAt));
    await clock.advance(100);
    await next;
    expect(admittedAt).toBe(100);
    expect(fg.stats('r')!.lastSecond).toMatchObject({ pass: 2, block: 0 });
  });

  it('rejects at once when the signal is already aborted', async () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    await expect(fg.enter('r', { signal: AbortSignal.abort(new Error('early')) })).rejects.toThrow('early');
    expect(fg.stats('r')).toMatchObject({ concurrency: 0, lastSecond: { pass: 0, block: 0 } });
  });

  it('blocks everything at threshold 0 and passes calls taking no tokens', async () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 0 }]);
    expect(passes(fg.tryEntry('r'))).toBe(false);
    await expect(fg.enter('r')).rejects.toBeInstanceOf(FlowBlockError);
    expect(passes(fg.tryEntry('r', { acquireCount: 0 }))).toBe(true);
  });

  it('gives no Retry-After when threshold 0 blocks everything', async () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 0 }]);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: undefined });
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: undefined });
  });

  it('keeps its pacing across a reload of the same rule and starts afresh when the rule changes', () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    fg.entry('r');
    fg.loadFlowRules([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    expect(passes(fg.tryEntry('r'))).toBe(false);
    fg.loadFlowRules([{ resource: 'r', behavior: 'throttle', threshold: 20 }]);
    expect(passes(fg.tryEntry('r'))).toBe(true);
  });
});

describe('QPS throttle refunds', () => {
  it('leaves an aborted middle slot as a gap, so no slot is given twice', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    await fg.enter('r');
    const middle = new AbortController();
    const b = fg.enter('r', { signal: middle.signal });
    const c = fg.enter('r').then((entry) => entry.createdAt);
    middle.abort(new Error('left'));
    await expect(b).rejects.toThrow('left');
    const d = fg.enter('r').then((entry) => entry.createdAt);
    await clock.advance(300);
    expect([await c, await d]).toEqual([200, 300]);
  });

  it('gives back the last slot once, then leaves gaps', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    await fg.enter('r');
    const second = new AbortController();
    const third = new AbortController();
    const b = fg.enter('r', { signal: second.signal });
    const c = fg.enter('r', { signal: third.signal });
    third.abort(new Error('left'));
    second.abort(new Error('left'));
    await expect(c).rejects.toThrow();
    await expect(b).rejects.toThrow();
    const d = fg.enter('r').then((entry) => entry.createdAt);
    await clock.advance(200);
    expect(await d).toBe(200);
  });

  it('gives back a far slot even when now + wait rounds off it by an ulp', async () => {
    // An hour into the process, one call per 10^7 ms: the slot is at 13600000.1, but the aborted
    // call's now + wait comes to 13600000.099999998.
    const { fg, clock } = engineWith(
      [{ resource: 'r', behavior: 'throttle', threshold: 1e-4, maxQueueingTimeMs: 15_000_000 }],
      3_600_000.1,
    );
    (await fg.enter('r')).exit();
    await clock.advance(0.1);
    const aborted = new AbortController();
    const b = fg.enter('r', { signal: aborted.signal });
    aborted.abort(new Error('left'));
    await expect(b).rejects.toThrow('left');
    const c = fg.enter('r');
    await clock.advance(10_000_000);
    expect((await c).createdAt).toBeCloseTo(13_600_000.1, 3);
  });

  it('gives back no slot when a call taking no tokens does not run', () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'throttle', threshold: 10 }]);
    fg.entry('r');
    fg.entry('r', { acquireCount: 0 }).cancel();
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: 100 });
  });
});

describe('warm-up throttle refunds', () => {
  it('gives back the last slot of a cold pacer, so the next call takes it instead of queueing behind it', async () => {
    // Cold, 10/s warms from 10/3 per second: a slot every 300 ms.
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 10_000 },
    ]);
    await fg.enter('r');
    const second = new AbortController();
    const b = fg.enter('r', { signal: second.signal });
    second.abort(new Error('left'));
    await expect(b).rejects.toThrow('left');
    const d = fg.enter('r').then((entry) => entry.createdAt);
    await clock.advance(600);
    expect(await d).toBeCloseTo(300, 0);
  });

  it.each(['throttle', 'warmUpThrottle'] as const)(
    "at the slowest pace, one call per MAX_DURATION_MS, '%s' admits one of a hundred queued run() calls, each refusal with a finite wait (#24)",
    async (behavior) => {
      const warm = behavior === 'warmUpThrottle' ? { warmUpPeriodMs: 1000 } : {};
      const { fg } = engineWith([
        { resource: 'r', behavior, threshold: 1000 / MAX_DURATION_MS, maxQueueingTimeMs: 500, ...warm },
      ]);
      let ran = 0;
      const refusals = await Promise.all(
        Array.from({ length: 100 }, () =>
          fg
            .run('r', () => void ran++)
            .then(
              () => undefined,
              (error: FlowBlockError) => error.retryAfterMs,
            ),
        ),
      );
      expect(ran).toBe(1);
      expect(refusals.filter((wait) => wait === undefined)).toHaveLength(1);
      for (const wait of refusals.filter((w) => w !== undefined)) expect(wait).toBeCloseTo(MAX_DURATION_MS - 500, 0);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: MAX_DURATION_MS });
    },
  );
});
