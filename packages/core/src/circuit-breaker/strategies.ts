import type { CircuitBreakerRule } from './circuit-breaker-rule';

/** What a breaker's window holds at one instant: the calls completed in it. */
export interface WindowCounts {
  /** Completed calls. */
  readonly total: number;
  /** Completed calls slower than the rule's `maxAllowedRtMs` (always 0 for other strategies). */
  readonly slow: number;
  /** Completed calls that carried a business error. */
  readonly error: number;
}

/**
 * What trips a closed breaker: one per strategy (this file holds the three), answering only "trip?" from the window's
 * counts. The {@link BreakerStateMachine} owns everything else (the minimum request amount,
 * states, probes, timeouts).
 */
export interface BreakerStrategy {
  /**
   * The ratio or count that trips the breaker, when `counts` are past the rule's threshold;
   * `undefined` when they are not. Called only once the window holds `minRequestAmount` calls.
   */
  trip(counts: WindowCounts): number | undefined;
}

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

/** The strategy that decides when `rule`'s breaker trips. */
export function createBreakerStrategy(rule: CircuitBreakerRule): BreakerStrategy {
  switch (rule.strategy) {
    case 'slowRequestRatio':
      return new SlowRequestRatioBreaker(rule.threshold);
    case 'errorRatio':
      return new ErrorRatioBreaker(rule.threshold);
    case 'errorCount':
      return new ErrorCountBreaker(rule.threshold);
  }
}
