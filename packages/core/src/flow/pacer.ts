import { BLOCKED, PASS } from './traffic-controller';

/**
 * Even pacing (Sentinel's leaky bucket in ThrottlingController): each pass costs `costMs`;
 * a call passes at once when the previous pass is at least `costMs` ago, else it takes the
 * next free slot if that is at most `maxWaitMs` away.
 */
export class Pacer {
  private latestPassedTime = Number.NEGATIVE_INFINITY;
  /** `latestPassedTime` before the last slot was reserved, while that slot can be given back. */
  private beforeLastSlot: number | undefined;

  /** {@link PASS}, {@link BLOCKED} or the reserved wait in ms (only when `canWait`). */
  take(costMs: number, now: number, maxWaitMs: number, canWait: boolean): number {
    const expected = this.latestPassedTime + costMs;
    if (expected <= now) {
      this.latestPassedTime = now;
      this.beforeLastSlot = undefined;
      return PASS;
    }
    const wait = expected - now;
    if (!canWait || wait > maxWaitMs) return BLOCKED;
    this.beforeLastSlot = this.latestPassedTime;
    this.latestPassedTime = expected;
    return wait;
  }

  /** How long a call costing `costMs` would wait at `now`. */
  waitMs(costMs: number, now: number): number {
    return Math.max(0, this.latestPassedTime + costMs - now);
  }

  /**
   * Gives back the slot due at `slotAt`, if it is still the last one reserved: the next caller
   * then takes it. A slot with later ones behind it stays a gap, so no slot is ever given to
   * two callers.
   */
  refund(slotAt: number): void {
    if (this.beforeLastSlot === undefined || !sameTime(this.latestPassedTime, slotAt)) return;
    this.latestPassedTime = this.beforeLastSlot;
    this.beforeLastSlot = undefined;
  }
}

/** Equal up to float rounding (`slotAt` is recomputed as now + wait). */
function sameTime(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
}
