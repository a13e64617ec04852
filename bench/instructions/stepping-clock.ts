/**
 * The clock the instruction counts give Floodgate's engines, core and HTTP cases alike: time
 * that moves with the calls (a fixed step per read), not with the wall clock, which valgrind
 * slows about fiftyfold. On the wall clock a counted HTTP request sees its windows rotate and
 * its users' hotspot tokens refill fifty times as often as the same request served at full
 * speed, and, since the uninstrumented warm-up almost never takes those paths, in code V8 had
 * not optimized (the Express case's profile showed both, `refillTokens` as baseline code).
 */
import type { Clock } from '@floodgate/core/testing';

/**
 * A clock whose every read is 0.3 µs after the last: the same run reads the same times. The time
 * is kept in a typed array: in a closure's variable, each read would box a new number and store
 * it with a write barrier (about 50 instructions a read), which `performance.now()` does not.
 * Its waits are `setTimeout`s, as the default clock's: a case's timeout is set and cancelled as in
 * an application (through `sleep` and an `AbortController` on a build without `schedule`), and
 * never fires (the call ends first).
 */
export function steppingClock(): Clock {
  const now = new Float64Array([1_000]);
  return {
    now: () => (now[0]! += 0.0003),
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(signal.reason);
          },
          { once: true },
        );
      }),
    schedule: (ms, fire) => {
      const timer = setTimeout(fire, ms);
      return () => clearTimeout(timer);
    },
  };
}
