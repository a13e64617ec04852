import type { ClusterRuleConfig, ClusterRuleOptions } from '../cluster/cluster-rule-options';

/** What a hotspot rule counts per value: calls per duration, or calls in flight. */
export type HotParamMetric = 'qps' | 'concurrency';
/** How a QPS hotspot rule limits: a token bucket (`reject`) or even pacing (`throttle`). */
export type HotParamBehavior = 'reject' | 'throttle';

/**
 * A hotspot (hot parameter) rule as written by users (JSON-serialisable): limits per distinct
 * value of one argument (a user id, an IP, a SKU). Give exactly one of `paramIndex` and
 * `paramKey`.
 */
export interface HotParamRuleOptions {
  /** The guarded resource. */
  readonly resource: string;
  /** The argument's index in the entry's `args`; negative counts from the end. */
  readonly paramIndex?: number;
  /** The name of the parameter in the entry's `params`. */
  readonly paramKey?: string;
  /** @defaultValue 'qps' */
  readonly metric?: HotParamMetric;
  /** Calls per `durationMs` (qps) or calls in flight (concurrency), per value. */
  readonly threshold: number;
  /** Only `reject` for `concurrency`. @defaultValue 'reject' */
  readonly behavior?: HotParamBehavior;
  /** The refill period of a value's tokens. @defaultValue 1000 */
  readonly durationMs?: number;
  /** Extra tokens a value may burst with. @defaultValue 0 */
  readonly burstCount?: number;
  /** Longest wait for `throttle` in `enter()`. @defaultValue 0 (strict pacing) */
  readonly maxQueueingTimeMs?: number;
  /**
   * Most values tracked (LRU). @defaultValue min(4000 × duration in seconds, 200000) for
   * qps, 4000 for concurrency
   */
  readonly capacity?: number;
  /** Thresholds for chosen values, keyed by the value's string form. */
  readonly specificItems?: Readonly<Record<string, number>>;
  /** Take the decision from the cluster backend (qps only). */
  readonly cluster?: ClusterRuleOptions;
}

/** A hotspot rule in force: validated, with every default resolved. */
export interface HotParamRule {
  readonly resource: string;
  /** Exactly one of `paramIndex` and `paramKey` is set. */
  readonly paramIndex?: number;
  readonly paramKey?: string;
  readonly metric: HotParamMetric;
  readonly threshold: number;
  readonly behavior: HotParamBehavior;
  readonly durationMs: number;
  readonly burstCount: number;
  readonly maxQueueingTimeMs: number;
  readonly capacity: number;
  readonly specificItems: Readonly<Record<string, number>>;
  readonly cluster?: ClusterRuleConfig;
}
