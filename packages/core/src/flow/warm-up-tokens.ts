import { nextUp } from '../util/next-up';

/**
 * The token bucket behind warm-up (Sentinel's WarmUpController, after Guava's
 * SmoothWarmingUp). A cold system holds `maxToken` tokens and admits about
 * `threshold / coldFactor` per second; steady traffic drains the bucket below `warningToken`,
 * where the full threshold applies. Tokens are synced at most once per clock second.
 */
export class WarmUpTokens {
  /** Below this many stored tokens, the full threshold applies. */
  readonly warningToken: number;
  /** The tokens of a cold system. */
  readonly maxToken: number;
  /** How fast the admitted rate falls as tokens rise above `warningToken`. */
  readonly slope: number;
  private storedTokens = 0;
  private lastFilledTime = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly threshold: number,
    warmUpPeriodMs: number,
    private readonly coldFactor: number,
  ) {
    const warmUpSec = warmUpPeriodMs / 1000;
    this.warningToken = Math.floor(Math.floor(warmUpSec * threshold) / (coldFactor - 1));
    this.maxToken = this.warningToken + Math.floor((2 * warmUpSec * threshold) / (1 + coldFactor));
    this.slope = (coldFactor - 1) / threshold / (this.maxToken - this.warningToken);
  }

  /** The tokens in the bucket now (after the last sync). */
  get stored(): number {
    return this.storedTokens;
  }

  /**
   * Syncs the bucket with the previous second's passes and returns the rate (calls per
   * second) admitted now.
   */
  rate(previousPassQps: number, now: number): number {
    this.sync(Math.floor(previousPassQps), now);
    if (this.storedTokens >= this.warningToken && this.maxToken > this.warningToken) {
      const aboveToken = this.storedTokens - this.warningToken;
      return nextUp(1 / (aboveToken * this.slope + 1 / this.threshold));
    }
    return this.threshold;
  }

  private sync(previousPassQps: number, now: number): void {
    const second = now - (now % 1000);
    if (second <= this.lastFilledTime) return;
    const filled = this.coolDown(second, previousPassQps);
    this.storedTokens = Math.max(0, filled - previousPassQps);
    this.lastFilledTime = second;
  }

  private coolDown(second: number, previousPassQps: number): number {
    const old = this.storedTokens;
    const refill = (): number => Math.floor(old + ((second - this.lastFilledTime) * this.threshold) / 1000);
    let next = old;
    if (old < this.warningToken) next = refill();
    else if (old > this.warningToken && previousPassQps < Math.floor(Math.floor(this.threshold) / this.coldFactor)) next = refill();
    return Math.min(next, this.maxToken);
  }
}
