import type { AuthorityRule } from '../authority/authority';
import type { CircuitBreakerRule } from '../circuit-breaker/circuit-breaker-rule';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { ClusterRuleConfig } from '../cluster/cluster-contract';
import { join, MAX_DURATION_MS, show, type RuleReader } from '../kernel/rule-reader';
import type { SystemLimit, SystemRule } from '../system/system-rule';
import { API_DEFINITION_CODEC, GATEWAY_FLOW_CODEC } from './gateway-rules';
import {
  decimalKey,
  defaultRetryHint,
  ENTITY_FIELDS,
  everyCaller,
  GRADES,
  ignoredNumber,
  INT64,
  integerKey,
  isFractionKey,
  isIntegerKey,
  notRegex,
  readConstant,
  readHotspotCounting,
  readItems,
  seconds,
  sentinelCapacity,
  sentinelObject,
  toSeconds,
  typeCodec,
  wholeNumber,
  type Constant,
  type DialectCodec,
  type ItemSpec,
  type ReadRule,
  type WriteContext,
} from './sentinel-codec';

/*
 * Sentinel (Java) 1.8's rules, as its data sources store them: `FlowRule`, `DegradeRule`,
 * `ParamFlowRule` (with `ParamFlowItem` and `ParamFlowClusterConfig`), `SystemRule` and
 * `AuthorityRule`, all `AbstractRule`s (`id`, `resource`, `limitApp`, `regex`), with the
 * constants of `RuleConstant` and `ClusterRuleConstant`; and its dashboard's entities
 * (`FlowRuleEntity`... add `id`, `app`, `ip`, `port`, `gmtCreate`, `gmtModified`;
 * `ParamFlowRuleEntity` and `AuthorityRuleEntity` wrap the rule as `rule`). What Sentinel would
 * drop as invalid (logging a warning) is refused; what it ignores where it stands loads.
 */

const INT32 = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const JAVA_INT = { min: 0, max: 2 ** 31 - 1, integer: true } as const;

const FLOW_STRATEGIES: readonly Constant<'direct' | 'relate'>[] = [
  { value: 0, name: 'DIRECT', means: 'direct' },
  { value: 1, name: 'RELATE', means: 'relate' },
  {
    value: 2,
    name: 'CHAIN',
    refused:
      'a CHAIN rule limits only the calls entering through one context (refResource names it), and Floodgate has no call contexts; put the rule on the resource of that entry point',
  },
];
const FLOW_BEHAVIORS: readonly Constant<FlowRule['behavior']>[] = [
  { value: 0, name: 'DEFAULT', means: 'reject' },
  { value: 1, name: 'WARM_UP', means: 'warmUp' },
  { value: 2, name: 'RATE_LIMITER', means: 'throttle' },
  { value: 3, name: 'WARM_UP_RATE_LIMITER', means: 'warmUpThrottle' },
];
const DEGRADE_GRADES: readonly Constant<CircuitBreakerRule['strategy']>[] = [
  { value: 0, name: 'RT', means: 'slowRequestRatio' },
  { value: 1, name: 'EXCEPTION_RATIO', means: 'errorRatio' },
  { value: 2, name: 'EXCEPTION_COUNT', means: 'errorCount' },
];
const AUTHORITY_STRATEGIES: readonly Constant<AuthorityRule['strategy']>[] = [
  { value: 0, name: 'WHITE', means: 'allow' },
  { value: 1, name: 'BLACK', means: 'deny' },
];
const THRESHOLD_TYPES: readonly Constant<ClusterRuleConfig['thresholdType']>[] = [
  { value: 0, name: 'AVG_LOCAL', means: 'perInstance' },
  { value: 1, name: 'GLOBAL', means: 'global' },
];
const CLUSTER_STRATEGIES: readonly Constant<true>[] = [
  { value: 0, name: 'NORMAL', means: true },
  { value: 1, name: 'BORROW_REF', refused: "Sentinel's token server does not implement it (it ignores the rule)" },
];

const CLUSTER_FIELDS: Readonly<Record<string, string>> = {
  cluster: 'clusterMode',
  'cluster.thresholdType': 'clusterConfig.thresholdType',
  'cluster.fallbackToLocal': 'clusterConfig.fallbackToLocalWhenFail',
};

/** Sentinel's defaults that Floodgate's shared window stands for: 1 s, in the token server's 10 buckets. */
const CLUSTER_WINDOW = { sampleCount: 10, windowIntervalMs: 1000 } as const;

/**
 * `clusterMode` and `clusterConfig` as Floodgate's `cluster` field (`undefined`: not a cluster
 * rule). A rule that is not in cluster mode may carry any `clusterConfig` (Sentinel's dashboard
 * writes a full one on every rule): Sentinel does not read it, and neither does Floodgate.
 */
function readCluster(
  obj: Record<string, unknown>,
  path: string,
  reader: RuleReader,
  flow: boolean,
  carried: { flowId?: number },
): Record<string, unknown> | undefined {
  const clusterMode = reader.boolean(obj, 'clusterMode', path, false);
  if (!clusterMode) {
    if (obj.clusterConfig !== undefined) reader.object(obj.clusterConfig, join(path, 'clusterConfig'));
    return undefined;
  }
  const at = join(path, 'clusterConfig');
  if (obj.clusterConfig === undefined) {
    reader.fail(at, 'is required when clusterMode is true (Sentinel ignores a cluster rule without it)');
    return undefined;
  }
  const config = sentinelObject(obj.clusterConfig, at, reader);
  if (config === undefined) return undefined;
  const known = ['flowId', 'thresholdType', 'fallbackToLocalWhenFail', 'sampleCount', 'windowIntervalMs'];
  const concurrencyOnly = ['resourceTimeout', 'resourceTimeoutStrategy', 'acquireRefuseStrategy', 'clientOfflineTime'];
  reader.knownKeys(config, flow ? [...known, 'strategy', ...concurrencyOnly] : known, at);
  const flowId = reader.number(config, 'flowId', at, { min: 1, integer: true });
  if (Number.isSafeInteger(flowId) && flowId >= 1) carried.flowId = flowId;
  const thresholdType = readConstant(config, 'thresholdType', at, reader, THRESHOLD_TYPES, 0);
  // ClusterFlowConfig falls back to the local rule by default; ParamFlowClusterConfig does not.
  const fallbackToLocal = reader.boolean(config, 'fallbackToLocalWhenFail', at, flow);
  if (flow) readConstant(config, 'strategy', at, reader, CLUSTER_STRATEGIES, 0);
  for (const [key, value] of Object.entries(CLUSTER_WINDOW)) {
    if (config[key] !== undefined && config[key] !== value) {
      reader.fail(
        join(at, key),
        `must be ${value} (Sentinel's default): Floodgate's shared count is a one-second sliding window it does not size per rule, got ${show(config[key])}`,
      );
    }
  }
  // Sentinel's cluster concurrency control reads these; QPS rules (the only cluster rules Floodgate takes) do not.
  for (const key of concurrencyOnly) ignoredNumber(config, key, at, reader);
  return { thresholdType, fallbackToLocal };
}

/** Floodgate's `cluster` field as `clusterMode` and `clusterConfig`. */
function writeCluster(
  cluster: ClusterRuleConfig | undefined,
  path: string,
  reader: RuleReader,
  context: WriteContext,
  flow: boolean,
): Record<string, unknown> {
  if (cluster === undefined) return { clusterMode: false };
  if (cluster.leaseTokens > 0) {
    reader.fail(join(path, 'cluster.leaseTokens'), `has no Sentinel equivalent, got ${cluster.leaseTokens}`);
  }
  const common = {
    flowId: context.flowId(),
    thresholdType: cluster.thresholdType === 'perInstance' ? 0 : 1,
    fallbackToLocalWhenFail: cluster.fallbackToLocal,
  };
  const clusterConfig = flow
    ? {
        ...common,
        strategy: 0,
        ...CLUSTER_WINDOW,
        resourceTimeout: 2000,
        resourceTimeoutStrategy: 0,
        acquireRefuseStrategy: 0,
        clientOfflineTime: 2000,
      }
    : { ...common, ...CLUSTER_WINDOW };
  return { clusterMode: true, clusterConfig };
}

/** A dashboard `ParamFlowRuleEntity` / `AuthorityRuleEntity` wraps its rule: the rule and its path. */
function unwrap(
  obj: Record<string, unknown>,
  path: string,
  reader: RuleReader,
): { obj: Record<string, unknown>; path: string } | undefined {
  if (obj.rule === undefined || obj.resource !== undefined) return { obj, path };
  reader.knownKeys(obj, [...ENTITY_FIELDS, 'rule'], path);
  const at = join(path, 'rule');
  const inner = sentinelObject(obj.rule, at, reader);
  return inner === undefined ? undefined : { obj: inner, path: at };
}

const ABSTRACT_RULE_FIELDS = ['resource', 'limitApp', 'regex', ...ENTITY_FIELDS];

// ---- flow ----

const FLOW_FIELDS = [
  ...ABSTRACT_RULE_FIELDS,
  'grade',
  'count',
  'strategy',
  'refResource',
  'controlBehavior',
  'warmUpPeriodSec',
  'maxQueueingTimeMs',
  'clusterMode',
  'clusterConfig',
];

function readFlow(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, FLOW_FIELDS, path);
  notRegex(obj, path, reader);
  const metric = readConstant(obj, 'grade', path, reader, GRADES, 1);
  let behavior = readConstant(obj, 'controlBehavior', path, reader, FLOW_BEHAVIORS, 0);
  if (metric === 'concurrency' && obj.controlBehavior !== undefined && obj.controlBehavior !== 0) {
    reader.fail(
      join(path, 'controlBehavior'),
      `must be 0 (DEFAULT) for a THREAD-grade rule: Sentinel ignores it there (it always rejects over the count), got ${show(obj.controlBehavior)}`,
    );
    behavior = undefined;
  }
  const strategy = readConstant(obj, 'strategy', path, reader, FLOW_STRATEGIES, 0);
  if (strategy === 'relate' && (typeof obj.refResource !== 'string' || obj.refResource === '')) {
    reader.fail(join(path, 'refResource'), `is required when strategy is 1 (RELATE), got ${show(obj.refResource)}`);
  }
  const warm = behavior === 'warmUp' || behavior === 'warmUpThrottle';
  const queued = behavior === 'throttle' || behavior === 'warmUpThrottle';
  const warmUpPeriodMs = warm ? seconds(obj, 'warmUpPeriodSec', path, reader, 10) : undefined;
  if (!warm) ignoredNumber(obj, 'warmUpPeriodSec', path, reader);
  // Sentinel ignores a rate limiter rule whose queue is 0 ms long as invalid.
  const maxQueueingTimeMs = queued
    ? reader.number(obj, 'maxQueueingTimeMs', path, { above: 0, max: MAX_DURATION_MS }, 500)
    : undefined;
  if (!queued) ignoredNumber(obj, 'maxQueueingTimeMs', path, reader);
  const carried: { flowId?: number } = {};
  const cluster = readCluster(obj, path, reader, true, carried);
  const limitApp = obj.limitApp === undefined || obj.limitApp === '' ? 'default' : obj.limitApp;
  return {
    rule: {
      resource: obj.resource,
      metric: metric ?? 'qps',
      threshold: obj.count,
      behavior: behavior ?? 'reject',
      ...(warmUpPeriodMs !== undefined ? { warmUpPeriodMs } : {}),
      ...(maxQueueingTimeMs !== undefined ? { maxQueueingTimeMs } : {}),
      strategy: strategy ?? 'direct',
      ...(strategy === 'relate' ? { refResource: obj.refResource } : {}),
      limitOrigin: limitApp,
      ...(cluster !== undefined ? { cluster } : {}),
    },
    path,
    fields: {
      threshold: 'count',
      metric: 'grade',
      behavior: 'controlBehavior',
      warmUpPeriodMs: 'warmUpPeriodSec',
      limitOrigin: 'limitApp',
      ...CLUSTER_FIELDS,
    },
    carried,
  };
}

/** Why a flow rule's priority fields have no Sentinel equivalent. */
const NO_PRIORITY_FIELD = {
  prioritized:
    "has no Sentinel equivalent: Sentinel's prioritized is a flag of each call (SphU.entryWithPriority), not a field of the rule, and its occupy timeout one per process",
  partitions: "has no Sentinel equivalent: Sentinel's thread limits have no shares by priority",
  priorityFactors: "has no Sentinel equivalent: Sentinel's calls carry no priority but 'prioritized'",
} as const;

/** Why a concurrency rule with a queue cannot be written for Sentinel. */
const NO_CONCURRENCY_QUEUE =
  "has no Sentinel equivalent: Sentinel's concurrency (thread count) rules refuse at once and have no queue; remove maxQueueLength (and maxQueueingTimeMs) to write the rule";

function writeFlow(rule: FlowRule, path: string, reader: RuleReader, context: WriteContext): Record<string, unknown>[] {
  for (const field of ['prioritized', 'partitions', 'priorityFactors'] as const)
    if (rule[field] !== undefined) reader.fail(join(path, field), NO_PRIORITY_FIELD[field]);
  const behavior = FLOW_BEHAVIORS.find((c) => c.means === rule.behavior);
  if (behavior === undefined) {
    reader.fail(join(path, 'behavior'), `'${rule.behavior}' has no Sentinel equivalent`);
    return [];
  }
  if (rule.coldFactor !== undefined && rule.coldFactor !== 3) {
    reader.fail(
      join(path, 'coldFactor'),
      `must be 3: Sentinel's cold factor is one per process (csp.sentinel.flow.cold.factor), got ${rule.coldFactor}`,
    );
  }
  const warmUpPeriodSec =
    rule.warmUpPeriodMs === undefined
      ? 10
      : toSeconds(rule.warmUpPeriodMs, path, 'warmUpPeriodMs', 'warmUpPeriodSec', reader);
  if (rule.maxQueueLength !== undefined) {
    // Sentinel's concurrency (thread count) rules refuse at once: it queues only paced QPS rules.
    reader.fail(join(path, 'maxQueueLength'), NO_CONCURRENCY_QUEUE);
    return [];
  }
  const maxQueueingTimeMs = rule.maxQueueingTimeMs ?? 500;
  if (rule.maxQueueingTimeMs !== undefined) {
    wholeNumber(maxQueueingTimeMs, path, 'maxQueueingTimeMs', 'an int', reader);
    if (maxQueueingTimeMs === 0) {
      reader.fail(
        join(path, 'maxQueueingTimeMs'),
        'must be > 0: Sentinel ignores a rate limiter rule with a 0 ms queue as invalid',
      );
    }
  }
  return [
    {
      resource: rule.resource,
      limitApp: rule.limitOrigin,
      grade: rule.metric === 'qps' ? 1 : 0,
      count: rule.threshold,
      strategy: rule.strategy === 'relate' ? 1 : 0,
      ...(rule.refResource !== undefined ? { refResource: rule.refResource } : {}),
      controlBehavior: behavior.value,
      warmUpPeriodSec,
      maxQueueingTimeMs,
      ...writeCluster(rule.cluster, path, reader, context, true),
      regex: false,
    },
  ];
}

// ---- degrade ----

const DEGRADE_FIELDS = [
  ...ABSTRACT_RULE_FIELDS,
  'grade',
  'count',
  'timeWindow',
  'minRequestAmount',
  'slowRatioThreshold',
  'statIntervalMs',
  // A runtime counter that Sentinel before 1.8 wrote with its rules (its own demo files carry it).
  'passCount',
];

function readDegrade(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, DEGRADE_FIELDS, path);
  notRegex(obj, path, reader);
  everyCaller(obj, 'a degrade rule', path, reader);
  const strategy = readConstant(obj, 'grade', path, reader, DEGRADE_GRADES, 0);
  const retryTimeoutMs = seconds(obj, 'timeWindow', path, reader, undefined);
  const slow = strategy === 'slowRequestRatio';
  if (!slow) ignoredNumber(obj, 'slowRatioThreshold', path, reader);
  return {
    rule: {
      resource: obj.resource,
      strategy: strategy ?? 'errorCount',
      // The slow ratio strategy's count is the slowest a call may be (ms); its ratio is slowRatioThreshold.
      threshold: slow ? (obj.slowRatioThreshold ?? 1) : obj.count,
      ...(slow ? { maxAllowedRtMs: obj.count } : {}),
      ...(obj.minRequestAmount !== undefined ? { minRequestAmount: obj.minRequestAmount } : {}),
      ...(obj.statIntervalMs !== undefined ? { statIntervalMs: obj.statIntervalMs } : {}),
      retryTimeoutMs: retryTimeoutMs ?? 1000,
    },
    path,
    fields: slow
      ? { strategy: 'grade', threshold: 'slowRatioThreshold', maxAllowedRtMs: 'count', retryTimeoutMs: 'timeWindow' }
      : { strategy: 'grade', threshold: 'count', retryTimeoutMs: 'timeWindow' },
  };
}

function writeDegrade(rule: CircuitBreakerRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  if (rule.bucketCount !== 1) {
    reader.fail(
      join(path, 'bucketCount'),
      `must be 1: Sentinel's breakers count in one bucket, got ${rule.bucketCount}`,
    );
  }
  if (rule.halfOpenProbes !== 1) {
    reader.fail(
      join(path, 'halfOpenProbes'),
      `must be 1: Sentinel's breakers probe with one call, got ${rule.halfOpenProbes}`,
    );
  }
  if (rule.cluster) reader.fail(join(path, 'cluster'), 'has no Sentinel equivalent (Sentinel shares no breakers)');
  wholeNumber(rule.statIntervalMs, path, 'statIntervalMs', 'an int', reader);
  const slow = rule.strategy === 'slowRequestRatio';
  return [
    {
      resource: rule.resource,
      limitApp: 'default',
      grade: DEGRADE_GRADES.find((c) => c.means === rule.strategy)!.value,
      count: slow ? rule.maxAllowedRtMs : rule.threshold,
      timeWindow: toSeconds(rule.retryTimeoutMs, path, 'retryTimeoutMs', 'timeWindow', reader),
      minRequestAmount: rule.minRequestAmount,
      slowRatioThreshold: slow ? rule.threshold : 1,
      statIntervalMs: rule.statIntervalMs,
      regex: false,
    },
  ];
}

// ---- param-flow ----

const PARAM_FIELDS = [
  ...ABSTRACT_RULE_FIELDS,
  'grade',
  'paramIdx',
  'count',
  'controlBehavior',
  'maxQueueingTimeMs',
  'burstCount',
  'durationInSec',
  'paramFlowItemList',
  'clusterMode',
  'clusterConfig',
];

const JAVA_INTEGERS: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int: INT32,
  'java.lang.Integer': INT32,
  long: INT64,
  'java.lang.Long': INT64,
  short: [-(2n ** 15n), 2n ** 15n - 1n],
  'java.lang.Short': [-(2n ** 15n), 2n ** 15n - 1n],
  byte: [-128n, 127n],
  'java.lang.Byte': [-128n, 127n],
};
const JAVA_DECIMALS = ['double', 'java.lang.Double', 'float', 'java.lang.Float'];
const JAVA_BOOLEANS = ['boolean', 'java.lang.Boolean'];
const JAVA_CLASS_TYPES = [
  ...Object.keys(JAVA_INTEGERS),
  ...JAVA_DECIMALS,
  ...JAVA_BOOLEANS,
  'char',
  'java.lang.String',
];

/**
 * An item's value as Floodgate keys it (the value's string form), parsed as Sentinel's
 * `ParamFlowRuleUtil.parseItemValue` does; a string saying why when it cannot be.
 */
function javaItemKey(object: string, classType: string): { key: string } | { problem: string } {
  const range = JAVA_INTEGERS[classType];
  if (range !== undefined) {
    const key = integerKey(object, range[0], range[1]);
    return key !== undefined
      ? { key }
      : { problem: `must be an integer within [${range[0]}, ${range[1]}] (classType "${classType}")` };
  }
  if (JAVA_DECIMALS.includes(classType)) {
    const key = decimalKey(object.trim().replace(/[fFdD]$/, ''));
    return key !== undefined ? { key } : { problem: `must be a finite ${classType} (classType "${classType}")` };
  }
  if (JAVA_BOOLEANS.includes(classType)) {
    const lower = object.toLowerCase();
    // Boolean.parseBoolean reads anything but "true" as false: only the two words load.
    return lower === 'true' || lower === 'false'
      ? { key: lower }
      : { problem: `must be "true" or "false" (classType "${classType}"; Sentinel reads anything else as false)` };
  }
  if (classType === 'char') {
    return object.length === 1 ? { key: object } : { problem: 'must be one character (classType "char")' };
  }
  // "java.lang.String", or no classType: Sentinel takes the text as it is.
  return { key: object };
}

/** The classType Sentinel gets for an item Floodgate writes afresh: what the value looks like. */
function javaClassType(key: string): string {
  if (isIntegerKey(key, INT32)) return 'int';
  if (isIntegerKey(key, INT64)) return 'long';
  if (key === 'true' || key === 'false') return 'boolean';
  if (isFractionKey(key)) return 'double';
  return 'java.lang.String';
}

/** Sentinel's `ParamFlowItem`: `{ object, count, classType }`. */
const JAVA_ITEMS: ItemSpec = {
  fields: ['object', 'count', 'classType'],
  valueField: 'object',
  countField: 'count',
  countBounds: JAVA_INT,
  parse(item, at, reader) {
    const classType = item.classType ?? '';
    if (typeof classType !== 'string') {
      reader.fail(join(at, 'classType'), `must be a string, got ${show(classType)}`);
      return undefined;
    }
    if (!JAVA_CLASS_TYPES.includes(classType) && classType !== '') {
      reader.fail(
        join(at, 'classType'),
        `must be one of ${JAVA_CLASS_TYPES.map((t) => `"${t}"`).join(', ')} (Sentinel parses only these; any other type's arguments never equal the String it reads), got ${show(classType)}`,
      );
      return undefined;
    }
    if (typeof item.object !== 'string') {
      reader.fail(
        join(at, 'object'),
        item.object === undefined ? 'is required (a string)' : `must be a string, got ${show(item.object)}`,
      );
      return undefined;
    }
    const parsed = javaItemKey(item.object, classType);
    if ('problem' in parsed) {
      reader.fail(join(at, 'object'), `${parsed.problem}, got ${show(item.object)}`);
      return undefined;
    }
    return { key: parsed.key, ...(classType !== '' ? { type: classType } : {}) };
  },
};

function readParamFlow(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, PARAM_FIELDS, path);
  notRegex(obj, path, reader);
  everyCaller(obj, 'a param-flow rule', path, reader);
  const { metric, behavior } = readHotspotCounting(obj, path, reader, 'a hotspot count');
  if (obj.paramIdx === undefined) reader.fail(join(path, 'paramIdx'), 'is required (an integer)');
  const durationMs = seconds(obj, 'durationInSec', path, reader, 1, Math.floor(Number.MAX_SAFE_INTEGER / 1000));
  const { items, types } = readItems(obj.paramFlowItemList, join(path, 'paramFlowItemList'), reader, JAVA_ITEMS);
  const carried: { flowId?: number; itemTypes?: Record<string, string | number> } = { itemTypes: types };
  const cluster = readCluster(obj, path, reader, false, carried);
  return {
    rule: {
      resource: obj.resource,
      paramIndex: obj.paramIdx,
      metric: metric ?? 'qps',
      threshold: obj.count,
      behavior: behavior ?? 'reject',
      durationMs: durationMs ?? 1000,
      ...(obj.burstCount !== undefined ? { burstCount: obj.burstCount } : {}),
      ...(obj.maxQueueingTimeMs !== undefined ? { maxQueueingTimeMs: obj.maxQueueingTimeMs } : {}),
      specificItems: items,
      ...(cluster !== undefined ? { cluster } : {}),
    },
    path,
    fields: {
      paramIndex: 'paramIdx',
      threshold: 'count',
      metric: 'grade',
      behavior: 'controlBehavior',
      durationMs: 'durationInSec',
      specificItems: 'paramFlowItemList',
      ...CLUSTER_FIELDS,
    },
    carried,
  };
}

function writeParamFlow(
  rule: HotParamRule,
  path: string,
  reader: RuleReader,
  context: WriteContext,
): Record<string, unknown>[] {
  if (rule.paramKey !== undefined) {
    reader.fail(
      join(path, 'paramKey'),
      `has no Sentinel equivalent: Sentinel's hotspot rules read arguments by position (paramIdx), got ${show(rule.paramKey)}`,
    );
  }
  const durationInSec = toSeconds(rule.durationMs, path, 'durationMs', 'durationInSec', reader);
  sentinelCapacity(rule, durationInSec, path, reader);
  wholeNumber(rule.maxQueueingTimeMs, path, 'maxQueueingTimeMs', 'an int', reader);
  const paramFlowItemList = Object.entries(rule.specificItems).map(([key, count]) => {
    const carried = context.itemType(key);
    return { object: key, count, classType: typeof carried === 'string' ? carried : javaClassType(key) };
  });
  return [
    {
      resource: rule.resource,
      limitApp: 'default',
      grade: rule.metric === 'qps' ? 1 : 0,
      paramIdx: rule.paramIndex ?? 0,
      count: rule.threshold,
      controlBehavior: rule.behavior === 'throttle' ? 2 : 0,
      maxQueueingTimeMs: rule.maxQueueingTimeMs,
      burstCount: rule.burstCount,
      durationInSec,
      paramFlowItemList,
      ...writeCluster(rule.cluster, path, reader, context, false),
      regex: false,
    },
  ];
}

// ---- system ----

/** Sentinel's system limits with Floodgate's, and whether Sentinel's field is a `long`. */
const SYSTEM_LIMITS: readonly (readonly [string, SystemLimit, boolean])[] = [
  ['highestCpuUsage', 'maxCpuUsage', false],
  ['qps', 'maxQps', false],
  ['avgRt', 'maxAvgRtMs', true],
  ['maxThread', 'maxConcurrency', true],
];
const NODE_ONLY_LIMITS: readonly SystemLimit[] = [
  'maxEventLoopDelayMs',
  'maxEventLoopUtilization',
  'maxHeapUsedBytes',
  'maxRssBytes',
];

function readSystem(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule | undefined {
  reader.knownKeys(obj, [...ABSTRACT_RULE_FIELDS, 'highestSystemLoad', ...SYSTEM_LIMITS.map(([name]) => name)], path);
  notRegex(obj, path, reader);
  everyCaller(obj, 'a system rule', path, reader);
  const before = reader.issues.length;
  if (obj.resource !== undefined) {
    reader.fail(
      join(path, 'resource'),
      `must be absent: Sentinel's system rules apply to every inbound call, got ${show(obj.resource)}`,
    );
  }
  // Sentinel reads a negative limit as unset (each defaults to -1).
  const load = reader.number(obj, 'highestSystemLoad', path, {}, -1);
  if (load >= 0) {
    reader.fail(
      join(path, 'highestSystemLoad'),
      `is not supported: the host's load average says little about a Node process (use -1, and maxEventLoopDelayMs or maxEventLoopUtilization in a Floodgate rule), got ${load}`,
    );
  }
  const rule: Record<string, number> = {};
  const fields: Record<string, string> = {};
  for (const [name, limit, long] of SYSTEM_LIMITS) {
    const value = reader.number(obj, name, path, long ? { integer: true } : {}, -1);
    if (value >= 0) {
      rule[limit] = value;
      fields[limit] = name;
    }
  }
  if (Object.keys(rule).length === 0) {
    if (reader.issues.length === before) {
      reader.fail(path, 'sets no limit: every one of highestCpuUsage, qps, avgRt and maxThread is -1 or absent');
    }
    return undefined;
  }
  return { rule, path, fields };
}

function writeSystem(rule: SystemRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  for (const limit of NODE_ONLY_LIMITS) {
    if (rule[limit] !== undefined) reader.fail(join(path, limit), 'has no Sentinel equivalent');
  }
  if (rule.priorityFactors !== undefined)
    reader.fail(
      join(path, 'priorityFactors'),
      "has no Sentinel equivalent: Sentinel's system rules refuse every call alike",
    );
  defaultRetryHint(rule, path, 'Sentinel', reader);
  const written: Record<string, unknown> = { highestSystemLoad: -1 };
  for (const [name, limit, long] of SYSTEM_LIMITS) {
    const value = rule[limit];
    if (value !== undefined && long) wholeNumber(value, path, limit, 'a long', reader);
    written[name] = value ?? -1;
  }
  return [{ ...written, regex: false }];
}

// ---- authority ----

function readAuthority(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, [...ABSTRACT_RULE_FIELDS, 'strategy'], path);
  notRegex(obj, path, reader);
  const strategy = readConstant(obj, 'strategy', path, reader, AUTHORITY_STRATEGIES, 0);
  const limitApp = obj.limitApp;
  let origins: string[] = [];
  if (typeof limitApp !== 'string' || limitApp.trim() === '') {
    reader.fail(
      join(path, 'limitApp'),
      `is required: the origins, comma-separated (Sentinel ignores an authority rule without them), got ${show(limitApp)}`,
    );
  } else {
    // As Sentinel's AuthorityRuleChecker: exact names between commas; an empty one matches no caller.
    origins = limitApp.split(',').filter((origin) => origin !== '');
  }
  return {
    rule: { resource: obj.resource, strategy: strategy ?? 'allow', origins },
    path,
    fields: { origins: 'limitApp' },
  };
}

function writeAuthority(rule: AuthorityRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  rule.origins.forEach((origin, i) => {
    if (origin.includes(',')) {
      reader.fail(`${path}.origins[${i}]`, `cannot hold a comma in Sentinel's limitApp list, got ${show(origin)}`);
    }
  });
  if (rule.origins.length === 0) {
    reader.fail(
      join(path, 'origins'),
      'must name an origin: Sentinel ignores an authority rule with an empty limitApp',
    );
  }
  return [
    {
      resource: rule.resource,
      limitApp: rule.origins.join(','),
      strategy: rule.strategy === 'allow' ? 0 : 1,
      regex: false,
    },
  ];
}

// ---- the dialect ----

/** A rule that a dashboard entity may wrap (`ParamFlowRuleEntity`, `AuthorityRuleEntity`), read either way. */
function wrappable(read: (obj: Record<string, unknown>, path: string, reader: RuleReader) => ReadRule) {
  return (obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule | undefined => {
    const inner = unwrap(obj, path, reader);
    return inner === undefined ? undefined : read(inner.obj, inner.path, reader);
  };
}

/** Sentinel (Java)'s rule JSON. */
export const JAVA_DIALECT: DialectCodec = {
  types: {
    flow: typeCodec('flow', readFlow, writeFlow),
    degrade: typeCodec('circuitBreakers', readDegrade, writeDegrade),
    // A hotspot rule keyed by a request attribute is a gateway rule.
    'param-flow': typeCodec<HotParamRule>(
      'hotParams',
      wrappable(readParamFlow),
      writeParamFlow,
      (rule) => rule.key === undefined,
    ),
    system: typeCodec('system', readSystem, writeSystem),
    authority: typeCodec('authority', wrappable(readAuthority), writeAuthority),
    'gw-flow': GATEWAY_FLOW_CODEC,
    'gw-api-group': API_DEFINITION_CODEC,
  },
  refused: {
    isolation:
      "isolation rules are sentinel-golang's; Sentinel (Java) limits concurrency with flow rules of grade 0 (THREAD)",
  },
};
