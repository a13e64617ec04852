import type { BreakerStrategy } from './breaker-strategy';
import type { WindowCounts } from './breaker-window';

/**
 * Trips when the ratio of failed calls is greater than the threshold, or is exactly 1.0 with a
 * threshold of 1.0. Sentinel Java's `ExceptionCircuitBreaker` compares with `>` only, so there
 * a threshold of 1.0 can never trip; Floodgate treats 1.0 as "every call failed", as Sentinel
 * does for the slow ratio.
 */
export class ErrorRatioBreaker implements BreakerStrategy {
  /** @param threshold - a ratio within [0, 1] */
  constructor(private readonly threshold: number) {}

  trip(counts: WindowCounts): number | undefined {
    if (counts.total === 0) return undefined;
    const ratio = counts.error / counts.total;
    return ratio > this.threshold || (ratio === 1 && this.threshold === 1) ? ratio : undefined;
  }
}
