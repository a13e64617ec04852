import { MAX_TIMER_MS, monotonicClock } from '../../../packages/core/src/kernel/clock';

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
});
