import { HotParamBlockError, type Entry } from '@floodgate/core';
import { arg, engineWith, isEntry } from './helpers';

const throttle = { resource: 'r', paramIndex: 0, behavior: 'throttle' } as const;

describe('hotspot QPS throttle (pacing per value)', () => {
  it('spaces a value’s sync calls durationMs / threshold apart', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 4 }]);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(fg.tryEntry('r', arg('a'))).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', value: 'a', retryAfterMs: 250 });
    await clock.advance(249);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('paces from the previous call on a clock that does not start at 0', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10 }], 5_000);
    fg.entry('r', arg('a'));
    expect(fg.tryEntry('r', arg('a'))).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', retryAfterMs: 100 });
    await clock.advance(100);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('paces over durationMs: 2 per 10 s is one call every 5 s', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 2, durationMs: 10_000 }]);
    fg.entry('r', arg('a'));
    await clock.advance(4_999);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('keeps fractional spacing: 3 per second is one call every 333.33 ms', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 3 }]);
    fg.entry('r', arg('a'));
    await clock.advance(333.33);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    await clock.advance(0.01);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('lets a call taking acquireCount slots pass acquireCount intervals after the previous pass', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10 }]);
    fg.entry('r', arg('a'));
    await clock.advance(299);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 3 }))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 3 }))).toBe(true);
    await clock.advance(99);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('paces each value on its own', () => {
    const { fg } = engineWith([{ ...throttle, threshold: 1 }]);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('b')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('c')))).toBe(true);
  });

  it('paces a specific item at its own rate and never passes an item of 0', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 1, specificItems: { vip: 10, abuser: 0 } }]);
    fg.entry('r', arg('vip'));
    fg.entry('r', arg('other'));
    await clock.advance(100);
    expect(isEntry(fg.tryEntry('r', arg('vip')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('other')))).toBe(false);
    expect(fg.tryEntry('r', arg('abuser'))).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', retryAfterMs: undefined });
  });

  it('never waits in a sync entry(), even with a queue', () => {
    const { fg } = engineWith([{ ...throttle, threshold: 10, maxQueueingTimeMs: 1_000 }]);
    fg.entry('r', arg('a'));
    expect(() => fg.entry('r', arg('a'))).toThrow(HotParamBlockError);
  });

  it('makes enter() wait only for a rule with a queue (resourceInfo().mayWait, which adapters read)', () => {
    const { fg } = engineWith([
      { ...throttle, resource: 'no-queue', threshold: 10 },
      { ...throttle, resource: 'queue', threshold: 10, maxQueueingTimeMs: 1 },
    ]);
    expect(fg.resourceInfo('no-queue').mayWait).toBe(false);
    expect(fg.resourceInfo('queue').mayWait).toBe(true);
  });

  it('paces enter() strictly by default: a call that would wait is refused', async () => {
    const { fg } = engineWith([{ ...throttle, threshold: 10 }]);
    await fg.enter('r', arg('a'));
    await expect(fg.enter('r', arg('a'))).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', retryAfterMs: 100 });
  });

  it('queues enter() calls one slot apart, up to maxQueueingTimeMs', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10, maxQueueingTimeMs: 250 }]);
    const admitted: number[] = [];
    const enter = (): Promise<void> => fg.enter('r', arg('a')).then((entry) => void admitted.push(entry.createdAt));
    const calls = [enter(), enter(), enter()];
    await expect(fg.enter('r', arg('a'))).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', retryAfterMs: 50 });
    await clock.advance(200);
    await Promise.all(calls);
    expect(admitted).toEqual([0, 100, 200]);
  });

  it('queues a call whose wait is exactly maxQueueingTimeMs', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10, maxQueueingTimeMs: 100 }]);
    await fg.enter('r', arg('a'));
    const queued = fg.enter('r', arg('a'));
    await clock.advance(100);
    await expect(queued).resolves.toMatchObject({ createdAt: 100 });
  });

  it('gives the slot back when a queued enter() is aborted', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10, maxQueueingTimeMs: 500 }]);
    await fg.enter('r', arg('a'));
    const controller = new AbortController();
    const aborted = fg.enter('r', { args: ['a'], signal: controller.signal });
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    const next = fg.enter('r', arg('a'));
    await clock.advance(100);
    await expect(next).resolves.toMatchObject({ createdAt: 100 });
  });

  it('keeps the slot of an aborted enter() that others queued behind, so no two calls share a slot', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10, maxQueueingTimeMs: 500 }]);
    await fg.enter('r', arg('a'));
    const controller = new AbortController();
    const aborted = fg.enter('r', { args: ['a'], signal: controller.signal });
    const admitted: number[] = [];
    const second = fg.enter('r', arg('a')).then((entry: Entry) => void admitted.push(entry.createdAt));
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    const third = fg.enter('r', arg('a')).then((entry: Entry) => void admitted.push(entry.createdAt));
    await clock.advance(300);
    await Promise.all([second, third]);
    expect(admitted).toEqual([200, 300]);
  });

  it('gives back every element’s slot when a queued enter() with an array value is aborted', async () => {
    const { fg, clock } = engineWith([{ ...throttle, threshold: 10, maxQueueingTimeMs: 500 }]);
    await fg.enter('r', arg('a'));
    const controller = new AbortController();
    const aborted = fg.enter('r', { args: [['a', 'b']], signal: controller.signal });
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    expect(isEntry(fg.tryEntry('r', arg('b')))).toBe(true);
    const next = fg.enter('r', arg('a'));
    await clock.advance(100);
    await expect(next).resolves.toMatchObject({ createdAt: 100 });
  });
});
