import { FlowBlockError } from '@floodgate/core';
import { engineWith } from './helpers';

const passes = (result: unknown): boolean => !(result instanceof FlowBlockError);

describe('QPS warmUpThrottle', () => {
  it('paces at the cold rate first and at the threshold once warm', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 10_000 },
    ]);
    // Cold: 10 / 3 per second, so one pass every 300 ms.
    expect(passes(fg.tryEntry('r'))).toBe(true);
    await clock.advance(299);
    expect(passes(fg.tryEntry('r'))).toBe(false);
    await clock.advance(1);
    expect(passes(fg.tryEntry('r'))).toBe(true);
    // Keep the rule busy at whatever rate it admits until it is warm.
    for (let t = 0; t < 30_000; t += 10) {
      fg.tryEntry('r');
      await clock.advance(10);
    }
    await clock.advance(100);
    expect(passes(fg.tryEntry('r'))).toBe(true);
    await clock.advance(99);
    expect(passes(fg.tryEntry('r'))).toBe(false);
    await clock.advance(1);
    expect(passes(fg.tryEntry('r'))).toBe(true);
  });

  it('queues enter() calls at the warm-up rate', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 10_000, maxQueueingTimeMs: 1000 },
    ]);
    const admitted: number[] = [];
    const calls = [0, 1, 2].map(() => fg.enter('r').then((entry) => void admitted.push(entry.createdAt)));
    await clock.advance(600);
    await Promise.all(calls);
    expect(admitted).toEqual([0, 300, 600]);
  });

  it('charges a call taking two tokens two cold intervals after the previous pass', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 10_000 },
    ]);
    fg.entry('r');
    await clock.advance(599);
    expect(passes(fg.tryEntry('r', { acquireCount: 2 }))).toBe(false);
    await clock.advance(1);
    expect(passes(fg.tryEntry('r', { acquireCount: 2 }))).toBe(true);
  });

  it('passes a call taking no tokens without moving the pacing', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 10_000 },
    ]);
    fg.entry('r');
    await clock.advance(200);
    expect(passes(fg.tryEntry('r', { acquireCount: 0 }))).toBe(true);
    await clock.advance(100);
    expect(passes(fg.tryEntry('r'))).toBe(true);
  });

  it('says when the next slot frees, and for a refused enter() how far it is beyond the queue', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', behavior: 'warmUpThrottle', threshold: 10, warmUpPeriodMs: 10_000, maxQueueingTimeMs: 500 },
    ]);
    const first = await fg.enter('r');
    const queued = fg.enter('r'); // the slot at 300
    await expect(fg.enter('r')).rejects.toMatchObject({
      code: 'ERR_FLOW_BLOCKED',
      retryAfterMs: expect.closeTo(100, 6),
    }); // 600 - 500
    await clock.advance(100);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: expect.closeTo(500, 6) }); // 600 - 100
    await clock.advance(200);
    (await queued).exit();
    first.exit();
  });

  it('blocks everything at threshold 0, with no Retry-After, and passes calls taking no tokens', async () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'warmUpThrottle', threshold: 0, warmUpPeriodMs: 1000 }]);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: undefined });
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: undefined });
    expect(passes(fg.tryEntry('r', { acquireCount: 0 }))).toBe(true);
  });
});
