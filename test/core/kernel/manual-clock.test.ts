import { ManualClock } from '@floodgate/core/testing';

describe('ManualClock', () => {
  it('starts at the given time and moves only when advanced', async () => {
    const clock = new ManualClock(500);
    expect(clock.now()).toBe(500);
    await clock.advance(250);
    expect(clock.now()).toBe(750);
  });

  it('moves synchronously when nobody sleeps', () => {
    const clock = new ManualClock();
    void clock.advance(10);
    expect(clock.now()).toBe(10);
  });

  it('wakes sleepers in deadline order, each at its own deadline', async () => {
    const clock = new ManualClock();
    const woke: Array<[string, number]> = [];
    void clock.sleep(300).then(() => woke.push(['b', clock.now()]));
    void clock.sleep(100).then(() => woke.push(['a', clock.now()]));
    void clock.sleep(300).then(() => woke.push(['c', clock.now()]));
    await clock.advance(299);
    expect(woke).toEqual([['a', 100]]);
    await clock.advance(1);
    expect(woke).toEqual([
      ['a', 100],
      ['b', 300],
      ['c', 300],
    ]);
  });

  it('wakes a sleep started by a woken sleeper within the same advance', async () => {
    const clock = new ManualClock();
    const woke: number[] = [];
    void clock.sleep(100).then(async () => {
      woke.push(clock.now());
      await clock.sleep(50);
      woke.push(clock.now());
    });
    await clock.advance(200);
    expect(woke).toEqual([100, 150]);
    expect(clock.now()).toBe(200);
  });

  it('rejects a sleep whose signal aborts, and forgets it', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(100, controller.signal);
    controller.abort(new Error('gone'));
    await expect(sleeping).rejects.toThrow('gone');
    expect(clock.pendingSleeps).toBe(0);
  });

  it('refuses to move backwards', async () => {
    await expect(new ManualClock().advance(-1)).rejects.toThrow(RangeError);
  });

  it('fires what it schedules at its deadline, among sleeps, and forgets a cancelled one', async () => {
    const clock = new ManualClock();
    const woke: Array<[string, number]> = [];
    void clock.sleep(200).then(() => woke.push(['sleep', clock.now()]));
    clock.schedule(100, () => woke.push(['scheduled', clock.now()]));
    const cancel = clock.schedule(150, () => woke.push(['cancelled', clock.now()]));
    expect(clock.pendingSleeps).toBe(3);
    cancel();
    expect(clock.pendingSleeps).toBe(2);
    await clock.advance(200);
    expect(woke).toEqual([
      ['scheduled', 100],
      ['sleep', 200],
    ]);
    expect(clock.pendingSleeps).toBe(0);
  });
});
