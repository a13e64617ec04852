import { performance } from 'node:perf_hooks';

/**
 * The engine's source of time. Every time read and every wait in Floodgate goes through a
 * `Clock`, so tests can drive time with {@link ManualClock} instead of sleeping.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; may be fractional. Only differences are meaningful. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. When `signal` aborts first, rejects with the signal's
   * reason and cancels the wait.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The longest delay `setTimeout` honours (2^31 − 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The default clock: `performance.now()` (monotonic, never jumps with the wall clock) and
 * `setTimeout` for waits. A wait longer than a timer can hold (2^31 − 1 ms) is slept in steps, so it never
 * overflows the timer and fires early; the timer is unref'd, so a pending wait never keeps the
 * process alive on its own.
 */
export const monotonicClock: Clock = Object.freeze({
  now: () => performance.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const deadline = performance.now() + ms;
      let timer: NodeJS.Timeout;
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const arm = (left: number): void => {
        timer = setTimeout(
          () => {
            const rest = deadline - performance.now();
            if (rest > 1) return arm(rest);
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          Math.min(Math.max(0, left), MAX_TIMER_MS),
        );
        timer.unref();
      };
      arm(ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
});
