import { HotParamBlockError } from '@floodgate/core';
import { arg, engineWith, isEntry, passesUntilBlocked } from './helpers';

describe('hotspot QPS reject (token bucket per value)', () => {
  it('passes exactly threshold calls per value in the first duration', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5 }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('adds burstCount to the first duration of a value', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, burstCount: 3 }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(8);
  });

  it('refills nothing before a full duration: 5 per 60 s gives nothing at +1 s, +10 s, +40 s and 5 at +61 s', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, durationMs: 60_000 }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
    for (const at of [1_000, 10_000, 40_000]) {
      await clock.advance(at - clock.now());
      expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(0);
    }
    await clock.advance(61_000 - clock.now());
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('needs more than a full duration: exactly durationMs after the last refill still adds nothing', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, durationMs: 60_000 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    await clock.advance(60_000);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(0);
    await clock.advance(1);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('counts the next duration from the refill, not from the first call', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, durationMs: 60_000 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    await clock.advance(61_000);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
    await clock.advance(60_000);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(0);
    await clock.advance(1);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('refills in proportion to the elapsed time, up to threshold + burstCount', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 10, burstCount: 10 }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(20);
    await clock.advance(1_500);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(15);
    await clock.advance(10_000);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(20);
  });

  it('does not carry unused tokens past the bucket size', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5 }]);
    for (let i = 0; i < 3; i++) fg.entry('r', arg('a')).exit();
    await clock.advance(1_001);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('takes acquireCount tokens per call', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5 }]);
    fg.entry('r', { args: ['a'], acquireCount: 3 });
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 3 }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 2 }))).toBe(true);
  });

  it('always refuses a call taking more tokens than the bucket holds, even for a new value', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, burstCount: 1 }]);
    expect(fg.tryEntry('r', { args: ['a'], acquireCount: 7 })).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      retryAfterMs: undefined,
    });
    await clock.advance(1_000_000);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 7 }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 6 }))).toBe(true);
  });

  it('does not charge a refused call', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    for (let i = 0; i < 100; i++) fg.tryEntry('r', arg('a'));
    await clock.advance(1_001);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('keeps each value to its own bucket', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(2);
    expect(passesUntilBlocked(fg, 'r', arg('b'))).toBe(2);
    expect(passesUntilBlocked(fg, 'r', arg('c'))).toBe(2);
  });

  it('gives specific items their own threshold, and blocks an item of 0 always', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', paramIndex: 0, threshold: 2, specificItems: { vip: 10, abuser: 0 } },
    ]);
    expect(passesUntilBlocked(fg, 'r', arg('vip'))).toBe(10);
    expect(passesUntilBlocked(fg, 'r', arg('someone'))).toBe(2);
    expect(fg.tryEntry('r', arg('abuser'))).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'abuser',
      retryAfterMs: undefined,
    });
    await clock.advance(1_000_000);
    expect(passesUntilBlocked(fg, 'r', arg('abuser'))).toBe(0);
  });

  it('always refuses a value whose threshold is 0, even with a burstCount', async () => {
    const { fg, clock } = engineWith([
      { resource: 'r', paramIndex: 0, threshold: 2, burstCount: 3, specificItems: { abuser: 0 } },
    ]);
    expect(fg.tryEntry('r', arg('abuser'))).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', retryAfterMs: undefined });
    await clock.advance(1_000_000);
    expect(passesUntilBlocked(fg, 'r', arg('abuser'))).toBe(0);
    expect(passesUntilBlocked(fg, 'r', arg('someone'))).toBe(5);
  });

  it('blocks every value of a rule with threshold 0', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 0, specificItems: { vip: 1 } }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(0);
    expect(passesUntilBlocked(fg, 'r', arg('vip'))).toBe(1);
  });

  it('reports the wait until the refill as retryAfterMs, after which a retry passes', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, durationMs: 60_000 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    await clock.advance(10_000);
    const blocked = fg.tryEntry('r', arg('a'));
    expect(blocked).toBeInstanceOf(HotParamBlockError);
    expect(blocked).toMatchObject({ retryAfterMs: 50_001 });
    await clock.advance(50_000);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('reports a longer wait when one refill would not hold enough tokens', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2, burstCount: 4 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    const blocked = fg.tryEntry('r', { args: ['a'], acquireCount: 5 });
    expect(blocked).toMatchObject({ retryAfterMs: 2_500 });
    await clock.advance(2_499);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(true);
  });

  it('counts the tokens still left in the retryAfterMs of a call asking for more', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2, burstCount: 4 }]);
    fg.entry('r', { args: ['a'], acquireCount: 5 }).exit();
    // 1 token left, 4 missing: 2 per second refill them in 2 s.
    expect(fg.tryEntry('r', { args: ['a'], acquireCount: 5 })).toMatchObject({ retryAfterMs: 2_000 });
    await clock.advance(1_999);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(true);
  });

  it('reports 1 ms past the duration when one refill exactly holds the call', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, durationMs: 60_000 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    expect(fg.tryEntry('r', { args: ['a'], acquireCount: 5 })).toMatchObject({ retryAfterMs: 60_001 });
    await clock.advance(60_000);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(false);
    await clock.advance(1);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(true);
  });

  it('counts the refill period from the last refill, not from a later call within it', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 5, durationMs: 60_000 }]);
    for (let i = 0; i < 4; i++) fg.entry('r', arg('a')).exit();
    await clock.advance(30_000);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(1);
    await clock.advance(30_001);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(5);
  });

  it('gives back no tokens for a call cancelled after its bucket was refilled', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    fg.entry('r', arg('a')).exit();
    const held = fg.entry('r', arg('a'));
    await clock.advance(1_001);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(2);
    held.cancel();
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('adds no token for a duration not complete yet under a fractional durationMs, where elapsed / durationMs rounds up', async () => {
    // In doubles 1698.3 / 99.9 is 17, but 1698.3 is below 17 × 99.9 (1698.3000000000002).
    expect(1_698.3 / 99.9).toBe(17);
    const { fg, clock } = engineWith([
      { resource: 'r', paramIndex: 0, threshold: 1, burstCount: 100, durationMs: 99.9 },
    ]);
    fg.entry('r', { args: ['a'], acquireCount: 101 }).exit();
    fg.entry('r', { args: ['b'], acquireCount: 101 }).exit();
    await clock.advance(1_698.3);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(16);
    await clock.advance(17 * 99.9 - clock.now());
    expect(clock.now()).toBe(1_698.300_000_000_000_2);
    expect(passesUntilBlocked(fg, 'r', arg('b'))).toBe(17);
  });

  it('refills a full bucket exactly after a 30-year idle gap under a threshold near 2^53', async () => {
    const threshold = 2 ** 53 - 2;
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold, burstCount: 1 }]);
    fg.entry('r', { args: ['a'], acquireCount: threshold + 1 }).exit();
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    await clock.advance(30 * 365 * 24 * 3600 * 1000);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: threshold + 1 }))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('adds exactly ⌊elapsed × threshold / durationMs⌋ tokens under a huge threshold, where a float product would round up', async () => {
    // 1001 × threshold / 1000 is 4508103226997867.497: a double product rounds it to ...868.
    const threshold = 2 ** 52 + 1;
    const burstCount = 2 ** 52 - 2;
    const exact = Number((1001n * BigInt(threshold)) / 1000n);
    expect(Math.floor((1001 * threshold) / 1000)).toBe(exact + 1);
    const { fg, clock } = engineWith([{ resource: 'r', paramIndex: 0, threshold, burstCount }]);
    fg.entry('r', { args: ['a'], acquireCount: threshold + burstCount }).exit();
    await clock.advance(1_001);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: exact + 1 }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: exact }))).toBe(true);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 1 }))).toBe(false);
  });
});
