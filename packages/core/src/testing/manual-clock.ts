import { sleepOn, type Clock } from '../kernel/clock';

interface Sleeper {
  readonly deadline: number;
  readonly seq: number;
  /** What runs at the deadline. */
  readonly wake: () => void;
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock that moves only when told to. Tests use it to pin time-dependent behaviour exactly:
 * `sleep()` resolves when `advance()` passes its deadline, never in real time.
 *
 * @example
 * const clock = new ManualClock();
 * const fg = new Floodgate({ clock });
 * await clock.advance(1000);
 */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly sleepers: Sleeper[] = [];

  /** @param start - the initial time in ms. @defaultValue 0 */
  constructor(start = 0) {
    this.t = start;
  }

  /** The current time in ms. */
  now(): number {
    return this.t;
  }

  /** Resolves once `advance()` has moved the clock `ms` past now. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn((wait, fire) => this.schedule(wait, fire), ms, signal);
  }

  /** Calls `fire` once `advance()` has moved the clock `ms` past now, unless cancelled first. */
  schedule(ms: number, fire: () => void): () => void {
    const sleeper: Sleeper = { deadline: this.t + Math.max(0, ms), seq: this.seq++, wake: fire };
    this.sleepers.push(sleeper);
    return () => {
      const i = this.sleepers.indexOf(sleeper);
      if (i >= 0) this.sleepers.splice(i, 1);
    };
  }

  /** How many `sleep()` and `schedule()` calls are waiting. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /**
   * Moves time forward by `ms`, waking sleepers in deadline order, each at its own deadline,
   * and letting their continuations run before the next one wakes. With no sleepers due, the
   * clock moves synchronously; otherwise await the returned promise.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`advance(ms): ms must be >= 0, got ${ms}`);
    const target = this.t + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.t = Math.max(this.t, next.deadline);
      next.wake();
      await flush();
    }
    this.t = target;
  }

  private nextDue(target: number): Sleeper | undefined {
    let best = -1;
    for (let i = 0; i < this.sleepers.length; i++) {
      const s = this.sleepers[i]!;
      if (s.deadline > target) continue;
      const b = best < 0 ? undefined : this.sleepers[best]!;
      if (b === undefined || s.deadline < b.deadline || (s.deadline === b.deadline && s.seq < b.seq)) best = i;
    }
    if (best < 0) return undefined;
    return this.sleepers.splice(best, 1)[0];
  }
}
