import type { WindowCounts } from './breaker-window';

/**
 * What trips a closed breaker: one per strategy, answering only "trip?" from the window's
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
