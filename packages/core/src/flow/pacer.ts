import { BLOCKED, PASS } from './traffic-controller';

/**
 * Even pacing (Sentinel's leaky bucket in ThrottlingController): each pass costs `costMs`;
 * a call passes at once when the previous pass is at least `costMs` ago, else it takes the
 * next free slot if that is at most `maxWaitMs` away.
 */
export class Pacer {
  private latestPassedTime = Number.NEGATIVE_INFINITY;

  /** {@link PASS}, {@link BLOCKED} or the reserved wait in ms (only when `canWait`). */
  take(costMs: number, now: number, maxWaitMs: number, canWait: boolean): number {
    const expected = this.latestPassedTime + costMs;
    if (expected <= now) {
      this.latestPassedTime = now;
      return PASS;
    }
    const wait = expected - now;
    if (!canWait || wait > maxWaitMs) return BLOCKED;
    this.latestPassedTime = expected;
    return wait;
  }

  /** How long a call costing `costMs` would wait at `now`. */
  waitMs(costMs: number, now: number): number {
    return Math.max(0, this.latestPassedTime + costMs - now);
  }

  /** Gives back a reserved slot of `costMs`. */
  refund(costMs: number): void {
    this.latestPassedTime -= costMs;
  }
}
