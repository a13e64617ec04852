import type { BreakerStrategy } from './breaker-strategy';
import type { WindowCounts } from './breaker-window';

/**
 * Trips when the ratio of slow calls (response time > `maxAllowedRtMs`) is greater than the
 * threshold, or is exactly 1.0 with a threshold of 1.0 (Sentinel's `ResponseTimeCircuitBreaker`).
 */
export class SlowRequestRatioBreaker implements BreakerStrategy {
  /** @param threshold - a ratio within [0, 1] */
  constructor(private readonly threshold: number) {}

  trip(counts: WindowCounts): number | undefined {
    if (counts.total === 0) return undefined;
    const ratio = counts.slow / counts.total;
    return ratio > this.threshold || (ratio === 1 && this.threshold === 1) ? ratio : undefined;
  }
}
