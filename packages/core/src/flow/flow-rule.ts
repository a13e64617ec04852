import type { ClusterRuleConfig, ClusterRuleOptions } from '../cluster/cluster-rule-options';

/** What a flow rule counts: passed calls per second, or calls in flight. */
export type FlowMetric = 'qps' | 'concurrency';
/**
 * How a QPS flow rule shapes traffic: `reject` over the threshold, `warmUp` from cold,
 * `throttle` (even pacing with a queue), or `warmUpThrottle` (pacing at the warm-up rate).
 */
export type FlowBehavior = 'reject' | 'warmUp' | 'throttle' | 'warmUpThrottle';
/** Whose traffic the rule counts: the resource's own (`direct`) or `refResource`'s (`relate`). */
export type FlowStrategy = 'direct' | 'relate';

/** A flow rule as written by users (JSON-serialisable). */
export interface FlowRuleOptions {
  /** The guarded resource. */
  readonly resource: string;
  /** @defaultValue 'qps' */
  readonly metric?: FlowMetric;
  /** Calls per second (`qps`) or calls in flight (`concurrency`); `0` blocks everything. */
  readonly threshold: number;
  /** Only `reject` for `concurrency`. @defaultValue 'reject' */
  readonly behavior?: FlowBehavior;
  /** Required for `warmUp` and `warmUpThrottle`: time from cold to full rate. */
  readonly warmUpPeriodMs?: number;
  /** A cold system admits about `threshold / coldFactor`; must be > 1. @defaultValue 3 */
  readonly coldFactor?: number;
  /** Longest wait in the throttling queue for `enter()`. @defaultValue 500 */
  readonly maxQueueingTimeMs?: number;
  /** @defaultValue 'direct' */
  readonly strategy?: FlowStrategy;
  /** Required for `relate`: the resource whose traffic is counted. */
  readonly refResource?: string;
  /**
   * Which callers the rule applies to: `'default'` (all, counted together), an origin name
   * (that origin only), or `'other'` (each origin not named by another rule of the resource).
   * @defaultValue 'default'
   */
  readonly limitOrigin?: string;
  /** Take the decision from the cluster backend. */
  readonly cluster?: ClusterRuleOptions;
}

/** A flow rule in force: validated, with every default resolved. */
export interface FlowRule {
  readonly resource: string;
  readonly metric: FlowMetric;
  readonly threshold: number;
  readonly behavior: FlowBehavior;
  /** Set for `warmUp` and `warmUpThrottle` only. */
  readonly warmUpPeriodMs?: number;
  /** Set for `warmUp` and `warmUpThrottle` only. */
  readonly coldFactor?: number;
  /** Set for `throttle` and `warmUpThrottle` only. */
  readonly maxQueueingTimeMs?: number;
  readonly strategy: FlowStrategy;
  /** Set for `relate` only. */
  readonly refResource?: string;
  readonly limitOrigin: string;
  readonly cluster?: ClusterRuleConfig;
}
