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

/**
 * The default clock: `performance.now()` (monotonic, never jumps with the wall clock) and
 * `setTimeout` for waits.
 */
export const monotonicClock: Clock = Object.freeze({
  now: () => performance.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
});
