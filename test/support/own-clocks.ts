import { ManualClock, type Clock } from '@floodgate/core/testing';

/**
 * Clocks of a user's own over a {@link ManualClock}, for the engine's timers on a `Clock` that is
 * not one of Floodgate's: time and waits are `manual`'s.
 */

/** A clock with no `schedule`: only `now` and `sleep` (Floodgate's timers then go through `sleep`). */
export function sleepOnlyClock(manual: ManualClock): Clock {
  return { now: () => manual.now(), sleep: (ms, signal) => manual.sleep(ms, signal) };
}

/** A clock whose `schedule` throws `new Error(message)` on every call. */
export function throwingScheduleClock(manual: ManualClock, message: string): Clock {
  return {
    ...sleepOnlyClock(manual),
    schedule: () => {
      throw new Error(message);
    },
  };
}
