import type { Floodgate } from '@floodgate/core';

type Clock = Floodgate['clock'];

const NOTHING = (): void => undefined;

/** One deadline: its callback runs at `at` unless it was cancelled first. */
export class Deadline {
  live = true;

  constructor(
    /** When it falls due (clock ms). */
    readonly at: number,
    public fire: () => void,
  ) {}

  /**
   * It will not fire. O(1): it stays in its lane until the lane passes it, holding nothing (the
   * callback, and the call it would reach, are let go at once).
   */
  cancel(): void {
    this.live = false;
    this.fire = NOTHING;
  }
}

/** The deadlines of one delay, due in the order they were set: one clock wait for all of them. */
class Lane {
  private queue: Deadline[] = [];
  private head = 0;
  private armed = false;

  constructor(private readonly clock: Clock) {}

  add(deadline: Deadline): void {
    this.queue.push(deadline);
    if (!this.armed) this.arm(deadline.at);
  }

  private arm(at: number): void {
    this.armed = true;
    void this.clock.sleep(Math.max(0, at - this.clock.now())).then(() => this.wake());
  }

  /** Fires what fell due, drops what was cancelled, and waits for the next live deadline, if any. */
  private wake(): void {
    this.armed = false;
    const now = this.clock.now();
    const queue = this.queue;
    while (this.head < queue.length) {
      const deadline = queue[this.head]!;
      if (deadline.live && deadline.at > now) break;
      this.head++;
      if (deadline.live) {
        const fire = deadline.fire;
        deadline.cancel();
        fire();
      }
    }
    if (this.head === queue.length) {
      this.queue = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024 && this.head * 2 > queue.length) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
    this.arm(this.queue[this.head]!.at);
  }
}

/**
 * The attempts' timeouts and hedge delays of one guard, without a timer per call (STYLE: no timers
 * in the hot path): deadlines of one delay fall due in the order they are set, so each delay is a
 * lane with at most one clock wait, for its earliest deadline. Cancelling costs nothing (no
 * `AbortController`, which costs microseconds in Node); a lane whose deadlines were all cancelled
 * wakes once more at the earliest of them, finds nothing and waits no more, so the guard's waits
 * end at most one delay after its last call. The number of lanes is bounded by the options (each
 * timeout, hedge delay and response-time bucket a percentile hedge can pick).
 */
export class Deadlines {
  private readonly lanes = new Map<number, Lane>();

  constructor(private readonly clock: Clock) {}

  /** Runs `fire` `delayMs` from now, unless the returned deadline is cancelled first. */
  after(delayMs: number, fire: () => void): Deadline {
    const deadline = new Deadline(this.clock.now() + delayMs, fire);
    let lane = this.lanes.get(delayMs);
    if (lane === undefined) this.lanes.set(delayMs, (lane = new Lane(this.clock)));
    lane.add(deadline);
    return deadline;
  }
}
