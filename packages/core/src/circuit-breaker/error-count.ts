import type { BreakerStrategy } from './breaker-strategy';
import type { WindowCounts } from './breaker-window';

/**
 * Trips when the count of failed calls in the window is greater than the threshold (Sentinel
 * Java's `>`; sentinel-golang trips at `>=`).
 */
export class ErrorCountBreaker implements BreakerStrategy {
  /** @param threshold - a count of errors, >= 0 */
  constructor(private readonly threshold: number) {}

  trip(counts: WindowCounts): number | undefined {
    return counts.error > this.threshold ? counts.error : undefined;
  }
}
