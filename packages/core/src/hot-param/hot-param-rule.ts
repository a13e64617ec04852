import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import {
  normalizeClusterOptions,
  type ClusterRuleConfig,
  type ClusterRuleOptions,
  type ClusterSupport,
} from '../cluster/cluster-contract';
import { BlockError, type BlockErrorOptions, type QuotaPolicy, type Refusal } from '../kernel/errors';
import { keySourceId, normalizeKeySource, type KeySource, type KeySourceOptions } from '../kernel/key-source';
import { join, MAX_COUNT, MAX_DURATION_MS, numberProblem, show, type RuleReader } from '../kernel/rule-reader';

/**
 * A hotspot (hot parameter) rule as written by users (JSON-serialisable): limits per distinct
 * value of one argument (a user id, an IP, a SKU), so one heavy value cannot starve the rest.
 * Give exactly one of `paramIndex`, `paramKey` and `key`.
 *
 * The value is read from the entry's `args[paramIndex]`, `params[paramKey]`, or, for `key`, a
 * part of the HTTP request the adapters read (`keys` of the entry). Strings,
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
export interface HotParamRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * The argument's index in the entry's `args`; negative counts from the end (`-1` is the
   * last). An integer.
   */
  readonly paramIndex?: number;
  /** The name of the parameter in the entry's `params`. */
  readonly paramKey?: string;
  /**
   * Where an HTTP request's value comes from, as data: the client's address, the host, a
   * header, a query parameter, a cookie, a route parameter or a property of the authenticated
   * user, with an optional `match` deciding which values the rule counts (Sentinel's gateway
   * `paramItem`): `{ from: 'header', name: 'x-api-key', match: { strategy: 'prefix', pattern: 'sk_' } }`.
   * The HTTP adapters read it (a request without the value is counted as `''`, all such
   * requests together); elsewhere the entry's `keys` carry it.
   */
  readonly key?: KeySourceOptions;
  /** What the rule counts per value: calls per `durationMs`, or calls in flight. @defaultValue 'qps' */
  readonly metric?: 'qps' | 'concurrency';
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
  readonly behavior?: 'reject' | 'throttle';
  /**
   * The period `threshold` counts over (`qps` only), in ms; > 0. Not a timer (a month is fine):
   * a throttled call never waits longer than `maxQueueingTimeMs`. @defaultValue 1000
   */
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
export interface HotParamRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** Exactly one of `paramIndex`, `paramKey` and `key` is set. */
  readonly paramIndex?: number;
  /** Exactly one of `paramIndex`, `paramKey` and `key` is set. */
  readonly paramKey?: string;
  /** Exactly one of `paramIndex`, `paramKey` and `key` is set. */
  readonly key?: KeySource;
  /** What the rule counts per value. */
  readonly metric: Required<HotParamRuleOptions>['metric'];
  /** Calls per `durationMs` (`qps`) or in flight (`concurrency`), per value without a specific item. */
  readonly threshold: number;
  /** How a QPS rule limits: a token bucket (`reject`) or even pacing (`throttle`). */
  readonly behavior: Required<HotParamRuleOptions>['behavior'];
  /** The period `threshold` counts over, in ms. */
  readonly durationMs: number;
  /** Extra tokens a value may burst with. */
  readonly burstCount: number;
  /** Longest wait of a throttled call in `enter()`, in ms. */
  readonly maxQueueingTimeMs: number;
  /** Most values tracked at once. */
  readonly capacity: number;
  /** A frozen copy of the given items (`{}` when none). */
  readonly specificItems: Readonly<Record<string, number>>;
  /** Set for a rule that takes its decision from the cluster backend. */
  readonly cluster?: ClusterRuleConfig;
}

/** What a hotspot rule counts per value. */
type HotParamMetric = HotParamRule['metric'];

/** The hotspot kind's name: its block errors' `kind`, its rule ids' prefix (`hotParam#0`). */
export const HOT_PARAM_KIND_NAME = 'hotParam' as const;

/**
 * A hotspot rule refused the call for one parameter value. Code `ERR_HOT_PARAM_BLOCKED`.
 * `retryAfterMs` is the wait until the value's bucket refills (`reject`) or its next pacing
 * slot is close enough (`throttle`); `undefined` for `concurrency` rules and for values that
 * can never pass (threshold 0, or more tokens asked than the bucket holds).
 */
export class HotParamBlockError extends BlockError<HotParamRule> {
  /** The parameter value that was limited, as the call gave it (for an array, the element). */
  readonly value: unknown;

  /** @param options - what every block error carries, and the value that was limited. */
  constructor(options: BlockErrorOptions<HotParamRule> & { readonly value: unknown }) {
    super(options);
    this.value = options.value;
  }

  /** The value limited: a rule enforced by percentage refuses the same values at every call. */
  override get enforcementKey(): unknown {
    return this.value;
  }

  /** Always `'ERR_HOT_PARAM_BLOCKED'`. */
  get code(): 'ERR_HOT_PARAM_BLOCKED' {
    return 'ERR_HOT_PARAM_BLOCKED';
  }
  /** Always the kind's name (`HOT_PARAM_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return HOT_PARAM_KIND_NAME;
  }
  /** Always `'quota'`: the value's budget is used up (429 over HTTP). */
  get refusal(): Refusal {
    return 'quota';
  }
  /** `'The request rate limit for this caller or parameter value was exceeded.'` */
  get detail(): string {
    return 'The request rate limit for this caller or parameter value was exceeded.';
  }
  /** Always `'HotParamBlockError'`. */
  get name(): string {
    return 'HotParamBlockError';
  }

  /** E.g. `Blocked by a hotspot rule on "getUser" for value "u1" (args[0])`. */
  get message(): string {
    const rule = this.rule;
    const value = typeof this.value === 'string' ? show(this.value) : String(this.value);
    const param =
      rule.key !== undefined
        ? ` (${keySourceId(rule.key)})`
        : rule.paramKey !== undefined
          ? ` (params.${rule.paramKey})`
          : rule.paramIndex !== undefined
            ? ` (args[${rule.paramIndex}])`
            : '';
    return `Blocked by a hotspot rule on "${this.resource}" for value ${value}${param}`;
  }

  /**
   * The QPS rule's quota for the refused value: its specific item's threshold when it has one,
   * per `durationMs` rounded up to whole seconds.
   */
  override quota(): QuotaPolicy | undefined {
    const rule = this.rule;
    if (rule.metric !== 'qps') return undefined;
    const key = String(this.value);
    const threshold = Object.hasOwn(rule.specificItems, key) ? rule.specificItems[key]! : rule.threshold;
    return {
      name: 'hotspot',
      quota: Math.floor(threshold),
      windowSeconds: Math.max(1, Math.ceil(rule.durationMs / 1000)),
    };
  }

  /** A plain object for logs and JSON, with the limited `value` (a bigint as its string). */
  override toJSON(): Record<string, unknown> {
    const value = typeof this.value === 'bigint' ? String(this.value) : this.value;
    return { ...super.toJSON(), value };
  }
}

/**
 * Defaults and limits of a hotspot rule's optional fields. The default `capacity` depends on
 * the rule: `min(capacityPerSecond × ⌈durationMs / 1000⌉, maxDefaultCapacity)` for `qps`,
 * `concurrencyCapacity` for `concurrency` (Sentinel's `ParameterMetric` sizes).
 */
export const HOT_PARAM_RULE_DEFAULTS = Object.freeze({
  /** Count calls per duration, per value (Sentinel's default grade QPS). */
  metric: 'qps',
  /** Sentinel's token bucket (`controlBehavior` DEFAULT). */
  behavior: 'reject',
  /** One second (Sentinel's `durationInSec = 1`). */
  durationMs: 1000,
  /** No extra tokens (Sentinel's `burstCount = 0`). */
  burstCount: 0,
  /** Strict pacing: a throttled call never queues (Sentinel's hotspot `maxQueueingTimeMs = 0`). */
  maxQueueingTimeMs: 0,
  /**
   * Values a `qps` rule tracks per started second of `durationMs` (Sentinel's
   * `BASE_PARAM_MAX_CAPACITY`). Sub-second and fractional durations round up to whole seconds,
   * so no rule tracks fewer than 4000 values by default.
   */
  capacityPerSecond: 4000,
  /** Most values a `qps` rule tracks by default (Sentinel's `TOTAL_MAX_CAPACITY`). */
  maxDefaultCapacity: 200_000,
  /** Values a `concurrency` rule tracks by default (Sentinel's `THREAD_COUNT_MAX_CAPACITY`). */
  concurrencyCapacity: 4000,
  /**
   * The largest `capacity` accepted. The LRU allocates about 30 bytes per slot up front, so
   * this bounds one rule's fixed cost at about 300 MB.
   */
  maxCapacity: 10_000_000,
} as const);

const FIELDS = [
  'resource',
  'paramIndex',
  'paramKey',
  'key',
  'metric',
  'threshold',
  'behavior',
  'durationMs',
  'burstCount',
  'maxQueueingTimeMs',
  'capacity',
  'specificItems',
  'cluster',
] as const;

const COUNT = { min: 0, integer: true } as const;
const QPS_CLUSTER: ClusterSupport = Object.freeze({});
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Validates one hotspot rule and resolves its defaults. Problems go to `reader`; the result is
 * only meaningful when none were found.
 */
export function normalizeHotParamRule(input: unknown, path: string, reader: RuleReader): HotParamRule | undefined {
  const D = HOT_PARAM_RULE_DEFAULTS;
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const resource = reader.resource(obj, 'resource', path);

  const paramIndex = reader.number(obj, 'paramIndex', path, { integer: true }, undefined);
  const paramKey = reader.string(obj, 'paramKey', path, undefined);
  const key = obj.key === undefined ? undefined : normalizeKeySource(obj.key, join(path, 'key'), reader);
  const given = (['paramIndex', 'paramKey', 'key'] as const).filter((field) => obj[field] !== undefined);
  if (given.length === 0) reader.fail(path, 'needs exactly one of paramIndex, paramKey and key, got none');
  else if (given.length > 1)
    reader.fail(path, `needs exactly one of paramIndex, paramKey and key, got ${given.join(' and ')}`);

  const metric = reader.oneOf(obj, 'metric', path, ['qps', 'concurrency'], D.metric);
  const threshold = reader.number(obj, 'threshold', path, COUNT);
  const behavior = reader.oneOf(obj, 'behavior', path, ['reject', 'throttle'], D.behavior);
  if (metric === 'concurrency' && behavior !== 'reject') {
    reader.fail(join(path, 'behavior'), `must be 'reject' for a concurrency rule, got '${behavior}'`);
  }
  const durationMs = reader.number(obj, 'durationMs', path, { above: 0, max: Number.MAX_SAFE_INTEGER }, D.durationMs);
  const burstCount = reader.number(obj, 'burstCount', path, COUNT, D.burstCount);
  const maxQueueingTimeMs = reader.number(
    obj,
    'maxQueueingTimeMs',
    path,
    { min: 0, max: MAX_DURATION_MS },
    D.maxQueueingTimeMs,
  );
  const capacity = reader.number(
    obj,
    'capacity',
    path,
    { min: 1, max: D.maxCapacity, integer: true },
    defaultCapacity(metric, durationMs),
  );
  const specificItems = readSpecificItems(obj.specificItems, join(path, 'specificItems'), reader);
  checkSafeBucket(threshold, burstCount, specificItems, path, reader);

  // Sentinel's hotspot cluster mode is QPS only. Without a cluster backend, a cluster rule limits as its local rule.
  const clusterSupport =
    metric === 'qps' ? QPS_CLUSTER : { unsupported: `cluster mode applies to qps rules only, got metric '${metric}'` };
  const cluster = normalizeClusterOptions(obj.cluster, path, reader, clusterSupport);
  return {
    resource,
    ...(key !== undefined ? { key } : paramKey !== undefined ? { paramKey } : { paramIndex: paramIndex ?? 0 }),
    metric,
    threshold,
    behavior,
    durationMs,
    burstCount,
    maxQueueingTimeMs,
    capacity,
    specificItems,
    ...(cluster ? { cluster } : {}),
  };
}

/**
 * Sentinel's sizes: `min(4000 × seconds, 200000)` for QPS rules, 4000 for concurrency.
 * Sentinel's durations are whole seconds; ours round up, so a short duration never shrinks
 * the LRU below 4000 values (a small LRU would forget busy values and let them start afresh).
 */
function defaultCapacity(metric: HotParamMetric, durationMs: number): number {
  const D = HOT_PARAM_RULE_DEFAULTS;
  if (metric === 'concurrency') return D.concurrencyCapacity;
  // At least one second: a duration of 5e-324 ms divides to 0 (it underflows), not to a fraction.
  return Math.min(D.capacityPerSecond * Math.max(1, Math.ceil(durationMs / 1000)), D.maxDefaultCapacity);
}

/** A frozen copy of the items (each an integer >= 0), in key order; `{}` when absent. */
function readSpecificItems(value: unknown, path: string, reader: RuleReader): Readonly<Record<string, number>> {
  if (value === undefined) return Object.freeze({});
  const obj = reader.object(value, path);
  if (obj === undefined) return Object.freeze({});
  const entries: [string, number][] = [];
  for (const key of Object.keys(obj)) {
    const problem = numberProblem(obj[key], COUNT);
    if (problem === undefined) entries.push([key, obj[key] as number]);
    else reader.fail(itemPath(path, key), problem);
  }
  // Sorted, so reordering the items of an unchanged rule keeps its state across a reload (rules
  // are matched by their JSON). fromEntries defines own properties: a '__proto__' item stays one.
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.freeze(Object.fromEntries(entries));
}

/** `specificItems.vip`, or `specificItems["10.0.0.1"]` when the key is not an identifier. */
function itemPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * A value's bucket holds `threshold + burstCount` tokens; keeping it a safe integer keeps the
 * token arithmetic exact.
 */
function checkSafeBucket(
  threshold: number,
  burstCount: number,
  items: Readonly<Record<string, number>>,
  path: string,
  reader: RuleReader,
): void {
  const limit = MAX_COUNT;
  if (threshold + burstCount > limit) {
    reader.fail(
      join(path, 'threshold'),
      `threshold + burstCount must be at most ${limit}, got ${threshold + burstCount}`,
    );
  }
  for (const key of Object.keys(items)) {
    const item = items[key]!;
    if (item + burstCount > limit) {
      reader.fail(
        itemPath(join(path, 'specificItems'), key),
        `item + burstCount must be at most ${limit}, got ${item + burstCount}`,
      );
    }
  }
}
