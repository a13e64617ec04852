import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import {
  normalizeClusterOptions,
  type ClusterRuleConfig,
  type ClusterRuleOptions,
  type ClusterSupport,
} from '../cluster/cluster-contract';
import { BlockError, type QuotaPolicy, type Refusal } from '../kernel/errors';
import {
  PRIORITIES,
  readPriorityFactors,
  type Priority,
  type PriorityFactors,
  type PriorityFactorsOptions,
} from '../kernel/priority';
import { MAX_DURATION_MS, type RuleReader } from '../kernel/rule-reader';

/** A flow rule as written by users (JSON-serialisable). */
export interface FlowRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /** What the rule counts: passed calls per second, or calls in flight. @defaultValue 'qps' */
  readonly metric?: 'qps' | 'concurrency';
  /**
   * Calls per second (`qps`) or calls in flight (`concurrency`), within [0, 2^53 − 1] (where
   * counts stay exact); `0` blocks everything. For `throttle` and `warmUpThrottle`, 0 or at least
   * `1000 / MAX_DURATION_MS` (about 4.66e-7: one call per 24.8 days). For `adaptive`, the limit
   * to start from, within [`minLimit`, `maxLimit`].
   */
  readonly threshold: number;
  /**
   * How the rule shapes traffic: `reject` over the threshold, `warmUp` from cold, `throttle`
   * (even pacing with a queue), or `warmUpThrottle` (pacing at the warm-up rate), for QPS rules;
   * `reject` or `adaptive` (a limit that follows measured latency) for concurrency rules.
   * @defaultValue 'reject'
   */
  readonly behavior?: 'reject' | 'warmUp' | 'throttle' | 'warmUpThrottle' | 'adaptive';
  /** `adaptive` only: the least the limit shrinks to, and the concurrency the no-load response time is measured at. @defaultValue 3 */
  readonly minLimit?: number;
  /** `adaptive` only: the most the limit grows to. @defaultValue 1000 */
  readonly maxLimit?: number;
  /** Required for `warmUp` and `warmUpThrottle`: time from cold to full rate, in ms. */
  readonly warmUpPeriodMs?: number;
  /** A cold system admits about `threshold / coldFactor`; must be > 1. @defaultValue 3 */
  readonly coldFactor?: number;
  /**
   * Longest wait in the queue for `enter()` and `run()`, in ms: the throttling queue of
   * `throttle` and `warmUpThrottle`, or the queue of a concurrency `reject` rule with
   * `maxQueueLength`. @defaultValue 500
   */
  readonly maxQueueingTimeMs?: number;
  /**
   * Concurrency `reject` rules only: how many calls may wait, first in first out (by priority
   * with `prioritized`), for a call in flight to end (a bulkhead's bounded queue), each at most
   * `maxQueueingTimeMs`; `0` refuses at once. A safe integer >= 0; the queue is always bounded. Only `enter()` and `run()` wait.
   * @defaultValue 0
   */
  readonly maxQueueLength?: number;
  /** Whose traffic the rule counts: the resource's own (`direct`) or `refResource`'s (`relate`). @defaultValue 'direct' */
  readonly strategy?: 'direct' | 'relate';
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
  /**
   * `adaptive` only: how the limit is scaled by the call's priority. A `'sheddable'` call is
   * refused from `sheddable × limit` calls in flight, a `'default'` one from the limit, a
   * `'critical'` one from `critical × limit`.
   * @defaultValue `{ sheddable: 0.8, critical: 1.1 }`
   */
  readonly priorityFactors?: PriorityFactorsOptions;
  /**
   * `concurrency` + `reject` only: the threshold split into guaranteed shares by priority, each
   * within [0, 1], summing to at most 1 (what is left is guaranteed to nobody). A priority may
   * use more than its share while the others leave theirs idle; the total never exceeds the
   * threshold. See `docs/priorities.md` for when a share counts as idle.
   * @defaultValue no partitions
   */
  readonly partitions?: Readonly<Partial<Record<Priority, number>>>;
  /**
   * Lets a call's priority decide how it is served:
   * - on `qps` + `reject` rules (Sentinel's prioritized entries), a `'critical'` call over the
   *   threshold takes a token of a coming window and waits for it, up to `occupyTimeoutMs`,
   *   instead of being refused (`enter()` and `run()` only; `entry()` cannot wait). Borrowed tokens
   *   count against the window they were borrowed from;
   * - on concurrency `reject` rules with a queue (`maxQueueLength` > 0), the queue serves critical
   *   calls first, then default, then sheddable ones (first in first out within a priority), and a
   *   full queue refuses its newest least important waiter to make room for a more important call.
   * @defaultValue false
   */
  readonly prioritized?: boolean;
  /**
   * `prioritized` only: the longest a critical call waits for a borrowed token, in ms (Sentinel's
   * `OccupyTimeoutProperty`).
   * @defaultValue 500
   */
  readonly occupyTimeoutMs?: number;
}

/** A flow rule in force: validated, with every default resolved. */
export interface FlowRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** What the rule counts. */
  readonly metric: Required<FlowRuleOptions>['metric'];
  /** Calls per second (`qps`) or in flight (`concurrency`); for `adaptive`, the limit it starts from. */
  readonly threshold: number;
  /** How the rule shapes traffic. */
  readonly behavior: Required<FlowRuleOptions>['behavior'];
  /** Set for `warmUp` and `warmUpThrottle` only. */
  readonly warmUpPeriodMs?: number;
  /** Set for `warmUp` and `warmUpThrottle` only. */
  readonly coldFactor?: number;
  /** Set for `throttle`, `warmUpThrottle` and concurrency rules with a queue only. */
  readonly maxQueueingTimeMs?: number;
  /** Set for concurrency `reject` rules with a queue (`maxQueueLength` > 0) only. */
  readonly maxQueueLength?: number;
  /** Set for `adaptive` only. */
  readonly minLimit?: number;
  /** Set for `adaptive` only. */
  readonly maxLimit?: number;
  /** Whose traffic the rule counts. */
  readonly strategy: Required<FlowRuleOptions>['strategy'];
  /** Set for `relate` only. */
  readonly refResource?: string;
  /** Which callers the rule applies to: `'default'`, an origin name, or `'other'`. */
  readonly limitOrigin: string;
  /** Set for a rule that takes its decision from the cluster backend. */
  readonly cluster?: ClusterRuleConfig;
  /** Set for an `adaptive` rule that gives them (absent: the defaults, 0.8 and 1.1). */
  readonly priorityFactors?: PriorityFactors;
  /** Set for a partitioned concurrency rule: every priority's share, 0 where not given. */
  readonly partitions?: Readonly<Record<Priority, number>>;
  /** Set (to `true`) for a prioritized QPS rule, or a concurrency rule whose queue serves by priority. */
  readonly prioritized?: true;
  /** Set for a prioritized QPS rule. */
  readonly occupyTimeoutMs?: number;
}

/** What a flow rule counts. */
type FlowMetric = FlowRule['metric'];
/** How a flow rule shapes traffic. */
type FlowBehavior = FlowRule['behavior'];
/** Whose traffic a flow rule counts. */
type FlowStrategy = FlowRule['strategy'];

/** Defaults of a flow rule's optional fields. */
export const FLOW_RULE_DEFAULTS = Object.freeze({
  /** Count passed calls per second. */
  metric: 'qps',
  /** Block over the threshold. */
  behavior: 'reject',
  /** Sentinel's `csp.sentinel.flow.cold.factor`. */
  coldFactor: 3,
  /** Sentinel's `FlowRule.maxQueueingTimeMs`. */
  maxQueueingTimeMs: 500,
  /** No queue: a concurrency rule refuses at once (Sentinel's). */
  maxQueueLength: 0,
  /** Envoy adaptive concurrency's `min_concurrency`. */
  minLimit: 3,
  /** Envoy adaptive concurrency's `max_concurrency_limit`. */
  maxLimit: 1000,
  /** Count the resource's own traffic. */
  strategy: 'direct',
  /** All callers, counted together (Sentinel's `limitApp = "default"`). */
  limitOrigin: 'default',
  /** Sentinel's `OccupyTimeoutProperty` (`csp.sentinel.flow.occupy.timeout`, 500 ms). */
  occupyTimeoutMs: 500,
} as const);

/** The flow kind's name: its block errors' `kind`, its rule ids' prefix (`flow#0`). */
export const FLOW_KIND_NAME = 'flow' as const;

/**
 * A flow rule (QPS or concurrency limit) refused the call. Code `ERR_FLOW_BLOCKED`; 429 over
 * HTTP, except for an `adaptive` rule: the resource is at the concurrency its latency allows,
 * which is the service's capacity, not the caller's quota (503, as Envoy's adaptive concurrency).
 */
export class FlowBlockError extends BlockError<FlowRule> {
  /** Always `'ERR_FLOW_BLOCKED'`. */
  get code(): 'ERR_FLOW_BLOCKED' {
    return 'ERR_FLOW_BLOCKED';
  }
  /** Always the kind's name (`FLOW_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return FLOW_KIND_NAME;
  }
  /** `'quota'` (429 over HTTP), or `'capacity'` for an `adaptive` rule (503). */
  get refusal(): Refusal {
    return this.rule.behavior === 'adaptive' ? 'capacity' : 'quota';
  }
  /** A fixed sentence for clients: which limit was reached (rate, concurrency, or the adaptive limit). */
  get detail(): string {
    if (this.rule.behavior === 'adaptive') return 'The resource is at the concurrency its measured latency allows.';
    return this.rule.metric === 'concurrency'
      ? 'The limit of concurrent requests to this resource was reached.'
      : 'The request rate limit of this resource was exceeded.';
  }
  /** Always `'FlowBlockError'`. */
  get name(): string {
    return 'FlowBlockError';
  }
  /** E.g. `Blocked by a qps flow rule on "getUser"`. */
  get message(): string {
    return `Blocked by a ${this.rule.metric} flow rule on "${this.resource}"`;
  }
  /** The QPS rule's quota: its threshold per second. */
  override quota(): QuotaPolicy | undefined {
    return this.rule.metric === 'qps'
      ? { name: 'flow', quota: Math.floor(this.rule.threshold), windowSeconds: 1 }
      : undefined;
  }
}

const FIELDS = [
  'resource',
  'metric',
  'threshold',
  'behavior',
  'warmUpPeriodMs',
  'coldFactor',
  'maxQueueingTimeMs',
  'maxQueueLength',
  'minLimit',
  'maxLimit',
  'strategy',
  'refResource',
  'limitOrigin',
  'cluster',
  'priorityFactors',
  'partitions',
  'prioritized',
  'occupyTimeoutMs',
] as const;

/**
 * The least non-zero threshold of a `throttle` or `warmUpThrottle` rule, about 4.66e-7 calls per
 * second: the slowest pace, one call per `MAX_DURATION_MS` (24.8 days). Its pacing interval,
 * `1000 × acquireCount / threshold` ms, is then a finite number for every `acquireCount`. (A
 * threshold of 1e-306 made it `Infinity`, and the pacing arithmetic `NaN`, which admitted every
 * queued call.)
 */
export const MIN_PACED_THRESHOLD = 1000 / MAX_DURATION_MS;

const WARM: readonly FlowBehavior[] = ['warmUp', 'warmUpThrottle'];
const QUEUED: readonly FlowBehavior[] = ['throttle', 'warmUpThrottle'];
const DURATION = { above: 0, max: MAX_DURATION_MS } as const;
const LIMIT = { min: 1, integer: true } as const;

/**
 * Validates one flow rule and resolves its defaults. Problems go to `reader`; the result is
 * only meaningful when none were found.
 */
export function normalizeFlowRule(input: unknown, path: string, reader: RuleReader): FlowRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const D = FLOW_RULE_DEFAULTS;
  const resource = reader.resource(obj, 'resource', path);
  const metric = reader.oneOf(obj, 'metric', path, ['qps', 'concurrency'], D.metric);
  const threshold = reader.number(obj, 'threshold', path, { min: 0 });
  reader.countLimit(threshold, `${path}.threshold`);
  const behavior = reader.oneOf(
    obj,
    'behavior',
    path,
    ['reject', 'warmUp', 'throttle', 'warmUpThrottle', 'adaptive'],
    D.behavior,
  );
  if (metric === 'concurrency' && behavior !== 'reject' && behavior !== 'adaptive') {
    reader.fail(`${path}.behavior`, `must be 'reject' or 'adaptive' for a concurrency rule, got '${behavior}'`);
  }
  if (metric === 'qps' && behavior === 'adaptive')
    reader.fail(`${path}.behavior`, "'adaptive' applies to metric 'concurrency' only");
  const strategy = reader.oneOf(obj, 'strategy', path, ['direct', 'relate'], D.strategy);
  const adaptive = behavior === 'adaptive';
  const minLimit = reader.number(obj, 'minLimit', path, LIMIT, D.minLimit);
  const maxLimit = reader.number(obj, 'maxLimit', path, LIMIT, D.maxLimit);
  if (adaptive) {
    if (minLimit > maxLimit) reader.fail(`${path}.maxLimit`, `must be >= minLimit (${minLimit}), got ${maxLimit}`);
    else if (!(threshold >= minLimit && threshold <= maxLimit)) {
      reader.fail(
        `${path}.threshold`,
        `must be within [minLimit, maxLimit] = [${minLimit}, ${maxLimit}] for an adaptive rule (the limit it starts from), got ${threshold}`,
      );
    }
    if (strategy !== 'direct')
      reader.fail(
        `${path}.strategy`,
        `must be 'direct' for an adaptive rule (it learns from the resource's own calls), got '${strategy}'`,
      );
  }
  const refResource = obj.refResource === undefined ? undefined : reader.resource(obj, 'refResource', path);
  if (strategy === 'relate' && obj.refResource === undefined) {
    reader.fail(`${path}.refResource`, "is required when strategy is 'relate'");
  }
  const warm = WARM.includes(behavior);
  const queued = QUEUED.includes(behavior);
  if (queued && threshold > 0 && threshold < MIN_PACED_THRESHOLD) {
    reader.fail(
      `${path}.threshold`,
      `must be 0 or at least ${MIN_PACED_THRESHOLD} (one call per ${MAX_DURATION_MS} ms) for a '${behavior}' rule, got ${threshold}`,
    );
  }
  const warmUpPeriodMs = warm
    ? reader.number(obj, 'warmUpPeriodMs', path, DURATION)
    : reader.number(obj, 'warmUpPeriodMs', path, DURATION, undefined);
  const coldFactor = reader.number(obj, 'coldFactor', path, { above: 1 }, D.coldFactor);
  const maxQueueingTimeMs = reader.number(
    obj,
    'maxQueueingTimeMs',
    path,
    { min: 0, max: MAX_DURATION_MS },
    D.maxQueueingTimeMs,
  );
  const limitOrigin = reader.string(obj, 'limitOrigin', path, D.limitOrigin);
  const maxQueueLength = reader.number(obj, 'maxQueueLength', path, { min: 0, integer: true }, D.maxQueueLength);
  reader.countLimit(maxQueueLength, `${path}.maxQueueLength`);
  const bulkhead = obj.maxQueueLength !== undefined && maxQueueLength > 0;
  if (obj.maxQueueLength !== undefined) {
    if (metric !== 'concurrency' || behavior !== 'reject')
      reader.fail(
        `${path}.maxQueueLength`,
        `applies to concurrency rules with behavior 'reject' only, got metric '${metric}' and behavior '${behavior}'`,
      );
    else if (strategy !== 'direct')
      reader.fail(
        `${path}.maxQueueLength`,
        `applies to strategy 'direct' only (the queue waits for the resource's own calls), got '${strategy}'`,
      );
    else if (limitOrigin === 'other')
      reader.fail(`${path}.maxQueueLength`, "does not apply to limitOrigin 'other' (one queue per rule)");
    if (obj.cluster !== undefined)
      reader.fail(`${path}.maxQueueLength`, 'does not apply to cluster rules (the queue is local)');
    if (obj.partitions !== undefined)
      reader.fail(`${path}.maxQueueLength`, 'does not combine with partitions (one queue, not one per priority)');
  }
  const cluster = normalizeClusterOptions(obj.cluster, path, reader, clusterSupport(metric, behavior, strategy));
  const priority = readPriorityFields(obj, path, reader, metric, behavior, strategy);
  return {
    resource,
    metric,
    threshold,
    behavior,
    ...(warm ? { warmUpPeriodMs, coldFactor } : {}),
    ...(queued || bulkhead ? { maxQueueingTimeMs } : {}),
    ...(bulkhead ? { maxQueueLength } : {}),
    ...(adaptive ? { minLimit, maxLimit } : {}),
    strategy,
    ...(strategy === 'relate' && refResource !== undefined ? { refResource } : {}),
    limitOrigin,
    ...(cluster ? { cluster } : {}),
    ...priority,
  };
}

/** The priority fields of a flow rule in force (see {@link FlowRuleOptions}). */
type PriorityFields = Pick<FlowRule, 'priorityFactors' | 'partitions' | 'prioritized' | 'occupyTimeoutMs'>;

/**
 * Reads the priority fields, each only where it applies: `priorityFactors` on `adaptive` rules,
 * `partitions` on concurrency `reject` rules, `prioritized` and `occupyTimeoutMs` on QPS
 * `reject` rules of the resource's own traffic, never in cluster mode (the store has no
 * borrowing).
 */
function readPriorityFields(
  obj: Record<string, unknown>,
  path: string,
  reader: RuleReader,
  metric: FlowMetric,
  behavior: FlowBehavior,
  strategy: FlowStrategy,
): PriorityFields {
  const fields: { -readonly [K in keyof PriorityFields]: PriorityFields[K] } = {};
  if (obj.priorityFactors !== undefined) {
    if (behavior !== 'adaptive')
      reader.fail(`${path}.priorityFactors`, `applies to behavior 'adaptive' only, got '${behavior}'`);
    else fields.priorityFactors = readPriorityFactors(obj, path, reader);
  }
  if (obj.partitions !== undefined) {
    if (metric !== 'concurrency' || behavior !== 'reject')
      reader.fail(`${path}.partitions`, `applies to concurrency rules with behavior 'reject' only`);
    else if (strategy !== 'direct' || obj.limitOrigin === 'other')
      reader.fail(
        `${path}.partitions`,
        "applies to the resource's own calls only (strategy 'direct', limitOrigin not 'other')",
      );
    else fields.partitions = readPartitions(obj.partitions, `${path}.partitions`, reader);
  }
  const prioritized = reader.boolean(obj, 'prioritized', path, false);
  const queued = metric === 'concurrency' && typeof obj.maxQueueLength === 'number' && obj.maxQueueLength > 0;
  if (prioritized && metric === 'concurrency') {
    // A bulkhead serving its queue by priority (the queue's own checks are maxQueueLength's).
    if (behavior !== 'reject' || !queued)
      reader.fail(
        `${path}.prioritized`,
        "applies to concurrency rules with a queue only (behavior 'reject', maxQueueLength > 0)",
      );
    else fields.prioritized = true;
    if (obj.occupyTimeoutMs !== undefined)
      reader.fail(
        `${path}.occupyTimeoutMs`,
        "applies to prioritized qps rules only (a queue's longest wait is maxQueueingTimeMs)",
      );
  } else if (prioritized) {
    if (metric !== 'qps' || behavior !== 'reject')
      reader.fail(`${path}.prioritized`, `applies to qps rules with behavior 'reject' only`);
    else if (strategy !== 'direct' || obj.limitOrigin === 'other')
      reader.fail(
        `${path}.prioritized`,
        "applies to the resource's own calls only (strategy 'direct', limitOrigin not 'other')",
      );
    else if (obj.cluster !== undefined)
      reader.fail(`${path}.prioritized`, 'cannot be set in cluster mode: the shared store does not lend tokens');
    fields.prioritized = true;
    fields.occupyTimeoutMs = reader.number(
      obj,
      'occupyTimeoutMs',
      path,
      { min: 0, max: MAX_DURATION_MS },
      FLOW_RULE_DEFAULTS.occupyTimeoutMs,
    );
  } else if (obj.occupyTimeoutMs !== undefined) {
    reader.fail(`${path}.occupyTimeoutMs`, 'applies to prioritized rules only (prioritized: true)');
  }
  return fields;
}

/** Reads `partitions`: a share within [0, 1] per priority, summing to at most 1. */
function readPartitions(input: unknown, path: string, reader: RuleReader): Readonly<Record<Priority, number>> {
  const shares = { critical: 0, default: 0, sheddable: 0 };
  const obj = reader.object(input, path);
  if (obj === undefined) return shares;
  reader.knownKeys(obj, PRIORITIES, path);
  for (const priority of PRIORITIES) shares[priority] = reader.number(obj, priority, path, { min: 0, max: 1 }, 0);
  const sum = shares.critical + shares.default + shares.sheddable;
  // A little slack for decimal shares (0.7 + 0.2 + 0.1 is 1.0000000000000002).
  if (sum > 1 + 1e-9) reader.fail(path, `shares must sum to at most 1, got ${sum}`);
  if (!PRIORITIES.some((priority) => obj[priority] !== undefined))
    reader.fail(path, `must give a share to at least one of ${PRIORITIES.join(', ')}`);
  return shares;
}

const REJECT_CLUSTER: ClusterSupport = Object.freeze({ leasable: true });
const THROTTLE_CLUSTER: ClusterSupport = Object.freeze({});

/**
 * Which cluster settings a flow rule can take. The store enforces QPS rules that `reject`
 * (a shared sliding window) or `throttle` (shared pacing), counting the resource's own
 * traffic. Concurrency, warm-up and `relate` rules stay local, as in Sentinel's token server,
 * which only checks QPS: a `cluster` field on them is a load error, not silently ignored.
 */
function clusterSupport(metric: FlowMetric, behavior: FlowBehavior, strategy: FlowStrategy): ClusterSupport {
  if (metric !== 'qps') return { unsupported: `cluster mode applies to qps rules only, got metric '${metric}'` };
  if (strategy !== 'direct')
    return { unsupported: `cluster mode applies to strategy 'direct' only, got '${strategy}'` };
  if (behavior === 'reject') return REJECT_CLUSTER;
  if (behavior === 'throttle') return THROTTLE_CLUSTER;
  return { unsupported: `cluster mode applies to behavior 'reject' or 'throttle' only, got '${behavior}'` };
}
