import { FlowBlockError } from '@floodgate/core';
import { engineWith, passesUntilBlocked } from './helpers';

describe('QPS reject (DefaultController)', () => {
  it('passes exactly the threshold in a window', () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 5 }]);
    expect(passesUntilBlocked(fg, 'r')).toBe(5);
  });

  it('passes a call while passes + acquireCount <= threshold', () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 5 }]);
    fg.entry('r', { acquireCount: 3 }).exit();
    expect(fg.tryEntry('r', { acquireCount: 3 })).toBeInstanceOf(FlowBlockError);
    fg.entry('r', { acquireCount: 2 }).exit();
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
  });

  it('keeps counting the first bucket until time reaches its slot again', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', threshold: 2 }]);
    fg.entry('r').exit();
    fg.entry('r').exit();
    await clock.advance(999);
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
    await clock.advance(1);
    expect(passesUntilBlocked(fg, 'r')).toBe(2);
  });

  it('slides: passes from the previous half-second still count', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', threshold: 4 }]);
    await clock.advance(400);
    fg.entry('r').exit();
    fg.entry('r').exit();
    fg.entry('r').exit();
    await clock.advance(300);
    expect(passesUntilBlocked(fg, 'r')).toBe(1);
    await clock.advance(300);
    expect(passesUntilBlocked(fg, 'r')).toBe(3);
  });

  it('says when the oldest passes leave the window', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', threshold: 1 }]);
    await clock.advance(100);
    fg.entry('r').exit();
    await clock.advance(399);
    // The pass sits in the bucket [0, 500), which leaves the window at 1000.
    expect(fg.tryEntry('r')).toMatchObject({ retryAfterMs: 501 });
  });

  it('blocks everything at threshold 0', () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 0 }]);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'r', rule: { threshold: 0 } });
  });

  it('lets a call taking no tokens pass a full window', () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 1 }]);
    fg.entry('r').exit();
    expect(fg.tryEntry('r', { acquireCount: 0 })).not.toBeInstanceOf(FlowBlockError);
  });

  it('does not count blocked calls as passes', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', threshold: 1 }]);
    fg.entry('r').exit();
    for (let i = 0; i < 10; i++) fg.tryEntry('r');
    await clock.advance(1000);
    expect(passesUntilBlocked(fg, 'r')).toBe(1);
  });

  it('blocks when any of several rules on the resource refuses', () => {
    const { fg } = engineWith([
      { resource: 'r', threshold: 10 },
      { resource: 'r', threshold: 3 },
    ]);
    expect(passesUntilBlocked(fg, 'r')).toBe(3);
  });

  it('leaves other resources alone', () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 1 }]);
    fg.entry('r').exit();
    for (let i = 0; i < 100; i++) fg.entry('other').exit();
    expect(fg.stats('other')!.lastSecond).toMatchObject({ pass: 100, block: 0 });
  });
});

describe('concurrency reject', () => {
  it('passes calls while fewer than the threshold are in flight', () => {
    const { fg } = engineWith([{ resource: 'r', metric: 'concurrency', threshold: 2 }]);
    const a = fg.entry('r');
    fg.entry('r');
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: undefined });
    a.exit();
    expect(fg.tryEntry('r')).not.toBeInstanceOf(FlowBlockError);
  });

  it('does not limit calls per second', () => {
    const { fg } = engineWith([{ resource: 'r', metric: 'concurrency', threshold: 1 }]);
    for (let i = 0; i < 100; i++) fg.entry('r').exit();
    expect(fg.stats('r')!.lastSecond.pass).toBe(100);
  });

  it('releases the slot when the guarded function throws in run()', async () => {
    const { fg } = engineWith([{ resource: 'r', metric: 'concurrency', threshold: 1 }]);
    await expect(
      fg.run('r', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(fg.stats('r')!.concurrency).toBe(0);
    await expect(fg.run('r', () => 'ok')).resolves.toBe('ok');
  });

  it('releases once however many times an entry exits', () => {
    const { fg } = engineWith([{ resource: 'r', metric: 'concurrency', threshold: 2 }]);
    const a = fg.entry('r');
    fg.entry('r');
    a.exit();
    a.exit();
    a.exit();
    expect(fg.stats('r')!.concurrency).toBe(1);
  });
});

describe('FlowBlockError', () => {
  it('tells the client in a fixed sentence whether a rate or a concurrency limit refused it', () => {
    const { fg } = engineWith([
      { resource: 'q', threshold: 0 },
      { resource: 'c', metric: 'concurrency', threshold: 0 },
    ]);
    expect(fg.tryEntry('q')).toMatchObject({
      refusal: 'quota',
      detail: 'The request rate limit of this resource was exceeded.',
    });
    expect(fg.tryEntry('c')).toMatchObject({
      refusal: 'quota',
      detail: 'The limit of concurrent requests to this resource was reached.',
    });
  });

  it("gives a QPS rule's quota, its whole threshold per second, for the RateLimit headers, and none for a concurrency rule", () => {
    const { fg } = engineWith([
      { resource: 'q', threshold: 2.5 },
      { resource: 'c', metric: 'concurrency', threshold: 0 },
    ]);
    expect(passesUntilBlocked(fg, 'q')).toBe(2);
    expect((fg.tryEntry('q') as FlowBlockError).quota()).toEqual({ name: 'flow', quota: 2, windowSeconds: 1 });
    expect((fg.tryEntry('c') as FlowBlockError).quota()).toBeUndefined();
  });
});
