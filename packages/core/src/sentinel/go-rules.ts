import type { CircuitBreakerRule } from '../circuit-breaker/circuit-breaker-rule';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import { join, show, type RuleReader } from '../kernel/rule-reader';
import type { SystemLimit, SystemRule } from '../system/system-rule';
import {
  decimalKey,
  defaultRetryHint,
  ignoredNumber,
  INT64,
  integerKey,
  isFractionKey,
  isIntegerKey,
  notRegex,
  readConstant,
  readItems,
  seconds,
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
 * sentinel-golang's rules, as its data sources read them (`ext/datasource`: `json.Unmarshal`
 * into `flow.Rule`, `circuitbreaker.Rule`, `isolation.Rule`, `system.Rule`, and hotspot rules
 * through its `HotspotRule` with `specificItems` as `[{ valKind, valStr, threshold }]`). Go
 * reads an absent field as its zero value, so the zero values are the defaults here. What
 * sentinel-golang refuses as invalid is refused; what it ignores where it stands loads.
 */

const UINT32 = 2 ** 32 - 1;
const MAX_SECONDS_SAFE = Math.floor(Number.MAX_SAFE_INTEGER / 1000);
const NO_ORIGINS = 'has no sentinel-golang equivalent (sentinel-golang has no origins)';
const NO_CLUSTER = 'has no sentinel-golang equivalent (sentinel-golang has no cluster mode)';
const NO_PRIORITIES = 'has no sentinel-golang equivalent (sentinel-golang has no call priorities)';

/** Refuses the priority fields of a flow rule: sentinel-golang's calls carry no priority. */
function noPriorities(rule: FlowRule, path: string, reader: RuleReader): void {
  for (const field of ['priorityFactors', 'partitions', 'prioritized'] as const)
    if (rule[field] !== undefined) reader.fail(join(path, field), NO_PRIORITIES);
}

/** A Go field whose zero value (or absence) stands for `value`. */
function zeroAs(field: unknown, value: number): unknown {
  return field === undefined || field === 0 ? value : field;
}

// ---- flow and isolation ----

const TOKEN_STRATEGIES: readonly Constant<boolean>[] = [
  { value: 0, name: 'Direct', means: false },
  { value: 1, name: 'WarmUp', means: true },
  {
    value: 2,
    name: 'MemoryAdaptive',
    refused: "it follows the process's memory use, and Floodgate's flow rules have no memory-adaptive threshold",
  },
];
const FLOW_BEHAVIORS: readonly Constant<boolean>[] = [
  { value: 0, name: 'Reject', means: false },
  { value: 1, name: 'Throttling', means: true },
];
const RELATIONS: readonly Constant<FlowRule['strategy']>[] = [
  { value: 0, name: 'CurrentResource', means: 'direct' },
  { value: 1, name: 'AssociatedResource', means: 'relate' },
];
const MEMORY_FIELDS = [
  'lowMemUsageThreshold',
  'highMemUsageThreshold',
  'memLowWaterMarkBytes',
  'memHighWaterMarkBytes',
];
const FLOW_FIELDS = [
  'id',
  'resource',
  'tokenCalculateStrategy',
  'controlBehavior',
  'threshold',
  'relationStrategy',
  'refResource',
  'maxQueueingTimeMs',
  'warmUpPeriodSec',
  'warmUpColdFactor',
  'statIntervalInMs',
  ...MEMORY_FIELDS,
  'regex',
];

function readFlow(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, FLOW_FIELDS, path);
  notRegex(obj, path, reader);
  const warm = readConstant(obj, 'tokenCalculateStrategy', path, reader, TOKEN_STRATEGIES, 0) ?? false;
  const queued = readConstant(obj, 'controlBehavior', path, reader, FLOW_BEHAVIORS, 0) ?? false;
  const strategy = readConstant(obj, 'relationStrategy', path, reader, RELATIONS, 0);
  if (strategy === 'relate' && (typeof obj.refResource !== 'string' || obj.refResource === '')) {
    reader.fail(
      join(path, 'refResource'),
      `is required when relationStrategy is 1 (AssociatedResource), got ${show(obj.refResource)}`,
    );
  }
  const interval = obj.statIntervalInMs;
  if (interval !== undefined && interval !== 0 && interval !== 1000) {
    reader.fail(
      join(path, 'statIntervalInMs'),
      `must be 0 or 1000: Floodgate's flow rules count over one second, got ${show(interval)}`,
    );
  }
  const warmUpPeriodMs = warm ? seconds(obj, 'warmUpPeriodSec', path, reader, undefined) : undefined;
  // Go's zero value stands for sentinel-golang's default cold factor, 3.
  const coldFactor = warm ? reader.number(obj, 'warmUpColdFactor', path, { min: 0, integer: true }, 0) || 3 : undefined;
  if (!warm) for (const key of ['warmUpPeriodSec', 'warmUpColdFactor']) ignoredNumber(obj, key, path, reader);
  if (!queued) ignoredNumber(obj, 'maxQueueingTimeMs', path, reader);
  for (const key of MEMORY_FIELDS) ignoredNumber(obj, key, path, reader);
  return {
    rule: {
      resource: obj.resource,
      threshold: obj.threshold,
      behavior: warm ? (queued ? 'warmUpThrottle' : 'warmUp') : queued ? 'throttle' : 'reject',
      ...(warmUpPeriodMs !== undefined ? { warmUpPeriodMs } : {}),
      ...(coldFactor !== undefined ? { coldFactor } : {}),
      // Go's zero value: a throttled call does not queue.
      ...(queued ? { maxQueueingTimeMs: obj.maxQueueingTimeMs ?? 0 } : {}),
      strategy: strategy ?? 'direct',
      ...(strategy === 'relate' ? { refResource: obj.refResource } : {}),
    },
    path,
    fields: {
      behavior: warm ? 'tokenCalculateStrategy' : 'controlBehavior',
      strategy: 'relationStrategy',
      warmUpPeriodMs: 'warmUpPeriodSec',
      coldFactor: 'warmUpColdFactor',
    },
  };
}

function writeFlow(rule: FlowRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  if (rule.limitOrigin !== 'default') reader.fail(join(path, 'limitOrigin'), NO_ORIGINS);
  if (rule.cluster !== undefined) reader.fail(join(path, 'cluster'), NO_CLUSTER);
  noPriorities(rule, path, reader);
  const warm = rule.behavior === 'warmUp' || rule.behavior === 'warmUpThrottle';
  const queued = rule.behavior === 'throttle' || rule.behavior === 'warmUpThrottle';
  if (rule.coldFactor !== undefined) wholeNumber(rule.coldFactor, path, 'coldFactor', 'a uint32', reader);
  if (rule.maxQueueingTimeMs !== undefined) {
    wholeNumber(rule.maxQueueingTimeMs, path, 'maxQueueingTimeMs', 'a uint32', reader);
  }
  return [
    {
      resource: rule.resource,
      tokenCalculateStrategy: warm ? 1 : 0,
      controlBehavior: queued ? 1 : 0,
      threshold: rule.threshold,
      relationStrategy: rule.strategy === 'relate' ? 1 : 0,
      refResource: rule.refResource ?? '',
      maxQueueingTimeMs: rule.maxQueueingTimeMs ?? 0,
      warmUpPeriodSec:
        rule.warmUpPeriodMs === undefined
          ? 0
          : toSeconds(rule.warmUpPeriodMs, path, 'warmUpPeriodMs', 'warmUpPeriodSec', reader),
      warmUpColdFactor: rule.coldFactor ?? 0,
      statIntervalInMs: 0,
      lowMemUsageThreshold: 0,
      highMemUsageThreshold: 0,
      memLowWaterMarkBytes: 0,
      memHighWaterMarkBytes: 0,
      regex: false,
    },
  ];
}

const ISOLATION_METRICS: readonly Constant<true>[] = [{ value: 0, name: 'Concurrency', means: true }];

function readIsolation(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, ['id', 'resource', 'metricType', 'threshold', 'regex'], path);
  notRegex(obj, path, reader);
  readConstant(obj, 'metricType', path, reader, ISOLATION_METRICS, 0);
  // A uint32 that sentinel-golang refuses at 0.
  const threshold = reader.number(obj, 'threshold', path, { min: 1, max: UINT32, integer: true });
  return { rule: { resource: obj.resource, metric: 'concurrency', threshold }, path, fields: {} };
}

function writeIsolation(rule: FlowRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  if (rule.maxQueueLength !== undefined)
    reader.fail(
      join(path, 'maxQueueLength'),
      'has no sentinel-golang equivalent: its isolation rules refuse at once and have no queue; remove maxQueueLength (and maxQueueingTimeMs) to write the rule',
    );
  if (rule.behavior !== 'reject') {
    reader.fail(join(path, 'behavior'), `'${rule.behavior}' has no sentinel-golang equivalent`);
  }
  if (rule.limitOrigin !== 'default') reader.fail(join(path, 'limitOrigin'), NO_ORIGINS);
  noPriorities(rule, path, reader);
  if (rule.strategy !== 'direct') {
    reader.fail(join(path, 'strategy'), "must be 'direct': sentinel-golang's isolation rules count their own resource");
  }
  if (!Number.isSafeInteger(rule.threshold) || rule.threshold < 1 || rule.threshold > UINT32) {
    reader.fail(
      join(path, 'threshold'),
      `must be a whole number within [1, ${UINT32}] for sentinel-golang's isolation threshold, got ${rule.threshold}`,
    );
  }
  return [{ resource: rule.resource, metricType: 0, threshold: rule.threshold, regex: false }];
}

// ---- circuit breakers ----

const BREAKER_STRATEGIES: readonly Constant<CircuitBreakerRule['strategy']>[] = [
  { value: 0, name: 'SlowRequestRatio', means: 'slowRequestRatio' },
  { value: 1, name: 'ErrorRatio', means: 'errorRatio' },
  { value: 2, name: 'ErrorCount', means: 'errorCount' },
];
const BREAKER_FIELDS = [
  'id',
  'resource',
  'strategy',
  'retryTimeoutMs',
  'minRequestAmount',
  'statIntervalMs',
  'statSlidingWindowBucketCount',
  'maxAllowedRtMs',
  'threshold',
  'probeNum',
];

function readBreaker(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, BREAKER_FIELDS, path);
  const strategy = readConstant(obj, 'strategy', path, reader, BREAKER_STRATEGIES, 0);
  if (obj.statIntervalMs === undefined) {
    reader.fail(join(path, 'statIntervalMs'), 'is required (sentinel-golang refuses a rule without it)');
  }
  const probeNum = obj.probeNum;
  if (probeNum !== undefined && probeNum !== 0) {
    reader.fail(
      join(path, 'probeNum'),
      `must be 0 (one probe): sentinel-golang lets every call through while half-open until probeNum calls succeed, where Floodgate lets its probes through and refuses the rest, got ${show(probeNum)}`,
    );
  }
  const slow = strategy === 'slowRequestRatio';
  if (!slow) ignoredNumber(obj, 'maxAllowedRtMs', path, reader);
  let threshold = obj.threshold;
  if (strategy === 'errorCount') {
    // sentinel-golang opens at errors >= uint64(threshold), Floodgate (as Sentinel Java) at errors > threshold.
    const value = reader.number(obj, 'threshold', path, { min: 0 });
    if (Math.floor(value) < 1 && reader.issues.every((issue) => issue.path !== join(path, 'threshold'))) {
      reader.fail(
        join(path, 'threshold'),
        `must be >= 1: sentinel-golang opens when errors >= threshold, so below 1 it opens with no error at all, got ${value}`,
      );
    }
    threshold = Math.floor(value) - 1;
  }
  return {
    rule: {
      resource: obj.resource,
      strategy: strategy ?? 'errorRatio',
      threshold,
      ...(slow ? { maxAllowedRtMs: obj.maxAllowedRtMs ?? 0 } : {}),
      // Go's zero values: at least one call (an empty window never trips), one bucket.
      minRequestAmount: zeroAs(obj.minRequestAmount, 1),
      ...(obj.statIntervalMs !== undefined ? { statIntervalMs: obj.statIntervalMs } : {}),
      bucketCount: zeroAs(obj.statSlidingWindowBucketCount, 1),
      retryTimeoutMs: obj.retryTimeoutMs,
    },
    path,
    fields: { bucketCount: 'statSlidingWindowBucketCount', halfOpenProbes: 'probeNum' },
  };
}

function writeBreaker(rule: CircuitBreakerRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  if (rule.halfOpenProbes !== 1) {
    reader.fail(
      join(path, 'halfOpenProbes'),
      `must be 1: sentinel-golang's probeNum lets every call through while half-open, got ${rule.halfOpenProbes}`,
    );
  }
  if (rule.cluster) reader.fail(join(path, 'cluster'), NO_CLUSTER);
  for (const field of ['retryTimeoutMs', 'statIntervalMs', 'maxAllowedRtMs'] as const) {
    const value = rule[field];
    if (value !== undefined) wholeNumber(value, path, field, 'an unsigned integer', reader);
  }
  const slow = rule.strategy === 'slowRequestRatio';
  return [
    {
      resource: rule.resource,
      strategy: BREAKER_STRATEGIES.find((c) => c.means === rule.strategy)!.value,
      retryTimeoutMs: rule.retryTimeoutMs,
      minRequestAmount: rule.minRequestAmount,
      statIntervalMs: rule.statIntervalMs,
      statSlidingWindowBucketCount: rule.bucketCount,
      maxAllowedRtMs: slow ? rule.maxAllowedRtMs : 0,
      threshold: rule.strategy === 'errorCount' ? Math.floor(rule.threshold) + 1 : rule.threshold,
      probeNum: 0,
    },
  ];
}

// ---- hotspot ----

const HOTSPOT_METRICS: readonly Constant<HotParamRule['metric']>[] = [
  { value: 0, name: 'Concurrency', means: 'concurrency' },
  { value: 1, name: 'QPS', means: 'qps' },
];
const HOTSPOT_BEHAVIORS: readonly Constant<HotParamRule['behavior']>[] = [
  { value: 0, name: 'Reject', means: 'reject' },
  { value: 1, name: 'Throttling', means: 'throttle' },
];
const HOTSPOT_FIELDS = [
  'id',
  'resource',
  'metricType',
  'controlBehavior',
  'paramIndex',
  'threshold',
  'maxQueueingTimeMs',
  'burstCount',
  'durationInSec',
  'paramsMaxCapacity',
  'specificItems',
];
const VAL_KINDS = ['KindInt', 'KindString', 'KindBool', 'KindFloat64'];
const GO_TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const GO_FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** sentinel-golang's value cache sizes: `min(20000, 4000 × durationInSec)` for QPS, 4000 for concurrency. */
function goCapacity(metric: HotParamRule['metric'], durationSec: number): number {
  return metric === 'concurrency' ? 4000 : Math.min(20_000, 4000 * durationSec);
}

/** A float item as sentinel-golang keys it: rounded to 5 decimals. */
function goFloat(key: string): string {
  return String(Number(Number(key).toFixed(5)));
}

/** An item's value as Floodgate keys it, parsed as sentinel-golang's `parseSpecificItems` does. */
function goItemKey(valStr: string, valKind: number): string | undefined {
  switch (valKind) {
    case 0:
      return integerKey(valStr, INT64[0], INT64[1]);
    case 1:
      return valStr;
    case 2:
      return GO_TRUE.includes(valStr) ? 'true' : GO_FALSE.includes(valStr) ? 'false' : undefined;
    default: {
      const key = decimalKey(valStr);
      return key === undefined ? undefined : goFloat(key);
    }
  }
}

/** The valKind sentinel-golang gets for an item Floodgate writes afresh: what the value looks like. */
function goValKind(key: string): number {
  if (isIntegerKey(key, INT64)) return 0;
  if (key === 'true' || key === 'false') return 2;
  if (isFractionKey(key) && goFloat(key) === key) return 3;
  return 1;
}

/** sentinel-golang's `SpecificValue`: `{ valKind, valStr, threshold }`. */
const GO_ITEMS: ItemSpec = {
  fields: ['valKind', 'valStr', 'threshold'],
  valueField: 'valStr',
  countField: 'threshold',
  countBounds: { min: 0, integer: true },
  parse(item, at, reader) {
    const valKind = item.valKind ?? 0;
    if (!(typeof valKind === 'number' && Number.isInteger(valKind) && valKind >= 0 && valKind < VAL_KINDS.length)) {
      reader.fail(
        join(at, 'valKind'),
        `must be one of ${VAL_KINDS.map((k, n) => `${n} (${k})`).join(', ')}, got ${show(valKind)}`,
      );
      return undefined;
    }
    const valStr = item.valStr ?? '';
    const key = typeof valStr === 'string' ? goItemKey(valStr, valKind) : undefined;
    if (key === undefined) {
      reader.fail(join(at, 'valStr'), `must be a ${VAL_KINDS[valKind]} value, got ${show(valStr)}`);
      return undefined;
    }
    return { key, type: valKind };
  },
};

function readHotspot(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  if (obj.paramKey !== undefined) {
    reader.fail(
      join(path, 'paramKey'),
      `is not read by sentinel-golang's data sources (their HotspotRule has paramIndex only), got ${show(obj.paramKey)}`,
    );
  }
  reader.knownKeys(obj, [...HOTSPOT_FIELDS, 'paramKey'], path);
  const metric = readConstant(obj, 'metricType', path, reader, HOTSPOT_METRICS, 0) ?? 'qps';
  let behavior = readConstant(obj, 'controlBehavior', path, reader, HOTSPOT_BEHAVIORS, 0);
  if (metric === 'concurrency' && behavior === 'throttle') {
    reader.fail(join(path, 'controlBehavior'), 'must be 0 (Reject) for a Concurrency rule, got 1 (Throttling)');
    behavior = undefined;
  }
  const durationMs = metric === 'qps' ? seconds(obj, 'durationInSec', path, reader, undefined, MAX_SECONDS_SAFE) : 1000;
  if (metric === 'concurrency') ignoredNumber(obj, 'durationInSec', path, reader);
  const { items, types } = readItems(obj.specificItems, join(path, 'specificItems'), reader, GO_ITEMS);
  return {
    rule: {
      resource: obj.resource,
      paramIndex: obj.paramIndex ?? 0,
      metric,
      threshold: obj.threshold,
      behavior: behavior ?? 'reject',
      durationMs: durationMs ?? 1000,
      ...(obj.burstCount !== undefined ? { burstCount: obj.burstCount } : {}),
      ...(obj.maxQueueingTimeMs !== undefined ? { maxQueueingTimeMs: obj.maxQueueingTimeMs } : {}),
      capacity: zeroAs(obj.paramsMaxCapacity, goCapacity(metric, (durationMs ?? 1000) / 1000)),
      specificItems: items,
    },
    path,
    fields: {
      metric: 'metricType',
      behavior: 'controlBehavior',
      durationMs: 'durationInSec',
      capacity: 'paramsMaxCapacity',
    },
    carried: { itemTypes: types },
  };
}

function writeHotspot(
  rule: HotParamRule,
  path: string,
  reader: RuleReader,
  context: WriteContext,
): Record<string, unknown>[] {
  if (rule.paramKey !== undefined) {
    reader.fail(
      join(path, 'paramKey'),
      `has no sentinel-golang equivalent: its data sources read arguments by position (paramIndex), got ${show(rule.paramKey)}`,
    );
  }
  if (rule.key !== undefined) {
    reader.fail(
      join(path, 'key'),
      "has no sentinel-golang equivalent: it has no gateway rules (write the rules as Sentinel (Java)'s gw-flow), and its hotspot rules read arguments by position (paramIndex)",
    );
  }
  if (rule.cluster !== undefined) reader.fail(join(path, 'cluster'), NO_CLUSTER);
  const qps = rule.metric === 'qps';
  const durationInSec = qps ? toSeconds(rule.durationMs, path, 'durationMs', 'durationInSec', reader) : 0;
  wholeNumber(rule.maxQueueingTimeMs, path, 'maxQueueingTimeMs', 'an int64', reader);
  const specificItems = Object.entries(rule.specificItems).map(([key, threshold]) => {
    const carried = context.itemType(key);
    return { valKind: typeof carried === 'number' ? carried : goValKind(key), valStr: key, threshold };
  });
  return [
    {
      resource: rule.resource,
      metricType: qps ? 1 : 0,
      controlBehavior: rule.behavior === 'throttle' ? 1 : 0,
      paramIndex: rule.paramIndex ?? 0,
      threshold: rule.threshold,
      maxQueueingTimeMs: rule.maxQueueingTimeMs,
      burstCount: rule.burstCount,
      durationInSec,
      paramsMaxCapacity: rule.capacity === goCapacity(rule.metric, durationInSec) ? 0 : rule.capacity,
      specificItems,
    },
  ];
}

// ---- system ----

const NO_LOAD =
  "the host's load average says little about a Node process; use maxEventLoopDelayMs or maxEventLoopUtilization in a Floodgate rule";
const SYSTEM_METRICS: readonly Constant<SystemLimit>[] = [
  { value: 0, name: 'Load', refused: NO_LOAD },
  { value: 1, name: 'AvgRT', means: 'maxAvgRtMs' },
  { value: 2, name: 'Concurrency', means: 'maxConcurrency' },
  { value: 3, name: 'InboundQPS', means: 'maxQps' },
  { value: 4, name: 'CpuUsage', means: 'maxCpuUsage' },
];
const ADAPTIVE_STRATEGIES: readonly Constant<true>[] = [
  { value: -1, name: 'NoAdaptive', means: true },
  { value: 0, name: 'unset', means: true },
  { value: 1, name: 'BBR', means: true },
];

function readSystem(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule | undefined {
  reader.knownKeys(obj, ['id', 'metricType', 'triggerCount', 'strategy'], path);
  const limit = readConstant(obj, 'metricType', path, reader, SYSTEM_METRICS, 0);
  readConstant(obj, 'strategy', path, reader, ADAPTIVE_STRATEGIES, 0);
  if (obj.triggerCount === undefined) reader.fail(join(path, 'triggerCount'), 'is required (a number >= 0)');
  if (limit === undefined) return undefined;
  return { rule: { [limit]: obj.triggerCount }, path, fields: { [limit]: 'triggerCount' } };
}

function writeSystem(rule: SystemRule, path: string, reader: RuleReader): Record<string, unknown>[] {
  defaultRetryHint(rule, path, 'sentinel-golang', reader);
  const written: Record<string, unknown>[] = [];
  for (const key of Object.keys(rule) as (keyof SystemRule)[]) {
    if (key === 'retryAfterMs') continue;
    const metric = SYSTEM_METRICS.find((c) => c.means === key);
    if (metric === undefined) {
      reader.fail(join(path, key), 'has no sentinel-golang equivalent');
      continue;
    }
    // Floodgate's CPU limit refuses only while the BBR check fails too: sentinel-golang's BBR strategy.
    written.push({ metricType: metric.value, triggerCount: rule[key], strategy: key === 'maxCpuUsage' ? 1 : -1 });
  }
  return written;
}

// ---- the dialect ----

/** sentinel-golang's rule JSON. */
export const GO_DIALECT: DialectCodec = {
  types: {
    flow: typeCodec<FlowRule>('flow', readFlow, writeFlow, (rule) => rule.metric === 'qps'),
    isolation: typeCodec<FlowRule>('flow', readIsolation, writeIsolation, (rule) => rule.metric === 'concurrency'),
    degrade: typeCodec('circuitBreakers', readBreaker, writeBreaker),
    'param-flow': typeCodec('hotParams', readHotspot, writeHotspot),
    system: typeCodec('system', readSystem, writeSystem),
  },
  refused: {
    authority: 'sentinel-golang has no authority rules',
    'gw-flow':
      "sentinel-golang has no gateway flow rules (they are Sentinel (Java)'s: read them with the 'sentinel' format)",
    'gw-api-group':
      "sentinel-golang has no gateway API definitions (they are Sentinel (Java)'s: read them with the 'sentinel' format)",
  },
};
