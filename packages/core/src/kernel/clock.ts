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
  /**
   * Optional: calls `fire` after `ms` milliseconds, unless the returned function is called
   * first (which cancels the wait). Floodgate's own timers (a call's or a route's timeout, a
   * queued call's deadline), nearly always cancelled before they fire, use it when the clock has
   * it: cancelling a `sleep` takes an `AbortController`, and in Node making and aborting one
   * costs microseconds, more than the guarded call itself. Without it, they go through `sleep`.
   */
  schedule?(ms: number, fire: () => void): () => void;
}

/** The longest delay `setTimeout` honours (2^31 − 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The default clock: `performance.now()` (monotonic, never jumps with the wall clock) and
 * `setTimeout` for waits. A wait longer than a timer can hold (2^31 − 1 ms) is slept in steps, so it never
 * overflows the timer and fires early; the timer is unref'd, so a pending wait never keeps the
 * process alive on its own.
 */
export const monotonicClock: Required<Clock> = Object.freeze({
  now: () => performance.now(),
  sleep: (ms: number, signal?: AbortSignal): Promise<void> => sleepOn(setTimer, ms, signal),
  schedule: setTimer,
});

/** {@link Clock.schedule} on `setTimeout`, in steps past the longest delay a timer holds. */
function setTimer(ms: number, fire: () => void): () => void {
  const deadline = performance.now() + ms;
  let timer: NodeJS.Timeout;
  const arm = (left: number): void => {
    timer = setTimeout(
      () => {
        const rest = deadline - performance.now();
        if (rest > 1) arm(rest);
        else fire();
      },
      Math.min(Math.max(0, left), MAX_TIMER_MS),
    );
    timer.unref();
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/**
 * {@link Clock.sleep} on a clock's {@link Clock.schedule}: resolves when the scheduled wait
 * fires, rejects with the signal's reason (and cancels the wait) when `signal` aborts first.
 */
export function sleepOn(
  schedule: NonNullable<Clock['schedule']>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = schedule(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Calls `fire` after `ms` on `clock`, unless the returned function is called first: through the
 * clock's `schedule` when it has one, else a `sleep` cancelled with an `AbortController`.
 */
export function scheduleOn(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.schedule !== undefined) return clock.schedule(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, () => {
    // Cancelled.
  });
  return () => controller.abort();
}
