import type { ClusterThresholdType } from '@floodgate/core/cluster';
import type { StoreGate } from './store-gate';

/** What a backend gives each of its limiters. */
export interface LimiterContext {
  /** The way to the store, with timeout and breaker. */
  readonly gate: StoreGate;
  /** Prepended to every key. */
  readonly prefix: string;
  /** ARGV[1] of every script: the shared time in ms, or `''` for Redis's own clock. */
  sharedNow(): string;
  /** Local time in ms, for lease expiry and the breaker's cool-down. */
  localNow(): number;
  /**
   * The threshold in force for a rule: × the live instances for `'perInstance'`, at most
   * 2^53 − 1 (a product beyond it would make the store's counts inexact).
   */
  effectiveThreshold(threshold: number, thresholdType: ClusterThresholdType): number;
}
