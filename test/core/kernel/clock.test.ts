import { ManualClock } from '@floodgate/core/testing';
import { MAX_TIMER_MS, monotonicClock, scheduleOn } from '../../../packages/core/src/kernel/clock';
import { sleepOnlyClock } from '../../support/own-clocks';

/** Arms `sleep(ms)` on the monotonic clock and returns the timers it set (then abandons the wait). */
async function timersOf(ms: number): Promise<{ delays: number[]; refs: boolean[] }> {
  const delays: number[] = [];
  const refs: boolean[] = [];
  const realSetTimeout = global.setTimeout;
  const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, delay?: number) => {
    const timer = realSetTimeout(fn, delay);
    delays.push(delay ?? 0);
    queueMicrotask(() => refs.push(timer.hasRef()));
    return timer;
  }) as typeof setTimeout);
  const abort = new AbortController();
  const sleeping = monotonicClock.sleep(ms, abort.signal).catch(() => 'aborted');
  spy.mockRestore();
  abort.abort();
  expect(await sleeping).toBe('aborted');
  return { delays, refs };
}

describe('monotonicClock', () => {
  it('never arms a timer longer than a timer can hold, so a long wait does not fire at once (#12)', async () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    const { delays } = await timersOf(1e11);
    expect(delays).toEqual([MAX_TIMER_MS]);
  });

  it('does not keep the process alive while it sleeps (#12)', async () => {
    const { refs } = await timersOf(10);
    expect(refs).toEqual([false]);
  });

  it('rejects with the reason of a signal already aborted', async () => {
    await expect(monotonicClock.sleep(1, AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });

  it("schedules through one unref'd timer, at most as long as a timer holds, and cancels it", () => {
    const armed: NodeJS.Timeout[] = [];
    const delays: number[] = [];
    const realSetTimeout = global.setTimeout;
    const setSpy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, delay?: number) => {
      const timer = realSetTimeout(fn, delay);
      armed.push(timer);
      delays.push(delay ?? 0);
      return timer;
    }) as typeof setTimeout);
    const clearSpy = jest.spyOn(global, 'clearTimeout');
    const fire = jest.fn();
    try {
      const cancel = monotonicClock.schedule(1e11, fire);
      expect(delays).toEqual([MAX_TIMER_MS]);
      expect(armed[0]!.hasRef()).toBe(false);
      cancel();
      expect(clearSpy).toHaveBeenCalledWith(armed[0]);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
    expect(fire).not.toHaveBeenCalled();
  });

  it('fires what it schedules once', async () => {
    const fire = jest.fn();
    await new Promise<void>((resolve) =>
      monotonicClock.schedule(0, () => {
        fire();
        resolve();
      }),
    );
    expect(fire).toHaveBeenCalledTimes(1);
  });
});

describe('scheduleOn(clock, ms, fire)', () => {
  it("uses the clock's schedule when it has one", async () => {
    const clock = new ManualClock();
    const sleep = jest.spyOn(clock, 'sleep');
    const fire = jest.fn();
    scheduleOn(clock, 100, fire);
    expect(sleep).not.toHaveBeenCalled();
    expect(clock.pendingSleeps).toBe(1);
    await clock.advance(99);
    expect(fire).not.toHaveBeenCalled();
    await clock.advance(1);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it('falls back to a sleep on a clock without schedule, cancelled through its signal', async () => {
    const manual = new ManualClock();
    const fired = jest.fn();
    scheduleOn(sleepOnlyClock(manual), 100, fired);
    const cancelled = jest.fn();
    const cancel = scheduleOn(sleepOnlyClock(manual), 100, cancelled);
    expect(manual.pendingSleeps).toBe(2);
    cancel();
    expect(manual.pendingSleeps).toBe(1);
    await manual.advance(100);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(cancelled).not.toHaveBeenCalled();
  });
});
