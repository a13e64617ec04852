import type { ClusterRuleConfig, ClusterRuleOptions } from '../cluster/cluster-rule-options';

/** What a hotspot rule counts per value: calls per duration, or calls in flight. */
export type HotParamMetric = 'qps' | 'concurrency';
/** How a QPS hotspot rule limits: a token bucket (`reject`) or even pacing (`throttle`). */
export type HotParamBehavior = 'reject' | 'throttle';

/**
 * A hotspot (hot parameter) rule as written by users (JSON-serialisable): limits per distinct
 * value of one argument (a user id, an IP, a SKU), so one heavy value cannot starve the rest.
 * Give exactly one of `paramIndex` and `paramKey`.
 *
 * The value is read from the entry's `args[paramIndex]` or `params[paramKey]`. Strings,
 * numbers, bigints and booleans are limited, compared by their string form (`7`, `7n` and
 * `'7'` are one value). An array is checked element by element and passes only if every
 * element does. A missing value (`undefined`, `null`, an index out of range) and any other
 * type (objects, symbols, functions: their identity never repeats across requests) are not
 * limited by the rule.
 *
 * @example
 * // 5 calls per second per user, 50 for the VIP, none for a known abuser
 * fg.loadHotParamRules([{ resource: 'getProfile', paramIndex: 0, threshold: 5,
 *   specificItems: { vip: 50, abuser: 0 } }]);
 * fg.entry('getProfile', { args: [userId] });
 */
export interface HotParamRuleOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * The argument's index in the entry's `args`; negative counts from the end (`-1` is the
   * last). An integer.
   */
  readonly paramIndex?: number;
  /** The name of the parameter in the entry's `params`. */
  readonly paramKey?: string;
  /** @defaultValue 'qps' */
  readonly metric?: HotParamMetric;
  /**
   * Calls per `durationMs` (`qps`) or calls in flight (`concurrency`), per value: an integer
   * >= 0; `0` blocks every value.
   */
  readonly threshold: number;
  /**
   * `reject`: a token bucket per value; `throttle`: each value paced to one call every
   * `durationMs × acquireCount / threshold` ms. Only `reject` for `concurrency`.
   * @defaultValue 'reject'
   */
  readonly behavior?: HotParamBehavior;
  /** The period `threshold` counts over (`qps` only), in ms; > 0. @defaultValue 1000 */
  readonly durationMs?: number;
  /** Extra tokens a value may burst with (`qps` + `reject` only); an integer >= 0. @defaultValue 0 */
  readonly burstCount?: number;
  /**
   * Longest wait of a throttled call in `enter()` (`qps` + `throttle` only); a sync `entry()`
   * never waits. @defaultValue 0 (strict pacing)
   */
  readonly maxQueueingTimeMs?: number;
  /**
   * Most values tracked at once (an LRU; the least recently used value is forgotten and starts
   * afresh when seen again). A positive integer, at most 10,000,000.
   * @defaultValue min(4000 × ⌈durationMs / 1000⌉, 200000) for `qps`, 4000 for `concurrency`
   */
  readonly capacity?: number;
  /**
   * Thresholds for chosen values, keyed by the value's string form (integers >= 0):
   * `{ vip: 100, '42': 0 }` gives `'vip'` 100 and blocks `42` and `'42'`.
   * @defaultValue {}
   */
  readonly specificItems?: Readonly<Record<string, number>>;
  /**
   * Take the decision from the cluster backend (`qps` only): each value's tokens (or pacing)
   * are shared by every process in `enter()`/`run()`; a sync `entry()` decides by the local
   * rule.
   */
  readonly cluster?: ClusterRuleOptions;
}

/**
 * A hotspot rule in force: validated, with every default resolved. Every field is always
 * present; `durationMs`, `burstCount` and `maxQueueingTimeMs` hold their defaults where the
 * rule's metric and behavior do not use them.
 */
export interface HotParamRule {
  readonly resource: string;
  /** Exactly one of `paramIndex` and `paramKey` is set. */
  readonly paramIndex?: number;
  /** Exactly one of `paramIndex` and `paramKey` is set. */
  readonly paramKey?: string;
  readonly metric: HotParamMetric;
  readonly threshold: number;
  readonly behavior: HotParamBehavior;
  readonly durationMs: number;
  readonly burstCount: number;
  readonly maxQueueingTimeMs: number;
  readonly capacity: number;
  /** A frozen copy of the given items (`{}` when none). */
  readonly specificItems: Readonly<Record<string, number>>;
  readonly cluster?: ClusterRuleConfig;
}
