import { normalizeClusterOptions, type ClusterSupport } from '../cluster/normalize-cluster-options';
import { join, numberProblem, type RuleReader } from '../rules/rule-reader';
import type { HotParamMetric, HotParamRule } from './hot-param-rule';
import { HOT_PARAM_RULE_DEFAULTS as D } from './hot-param-rule-defaults';

const FIELDS = [
  'resource', 'paramIndex', 'paramKey', 'metric', 'threshold', 'behavior', 'durationMs',
  'burstCount', 'maxQueueingTimeMs', 'capacity', 'specificItems', 'cluster',
] as const;

const COUNT = { min: 0, integer: true } as const;
const QPS_CLUSTER: ClusterSupport = Object.freeze({});
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Validates one hotspot rule and resolves its defaults. Problems go to `reader`; the result is
 * only meaningful when none were found.
 */
export function normalizeHotParamRule(input: unknown, path: string, reader: RuleReader): HotParamRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const resource = reader.string(obj, 'resource', path);

  const paramIndex = reader.number(obj, 'paramIndex', path, { integer: true }, undefined);
  const paramKey = reader.string(obj, 'paramKey', path, undefined);
  if (obj.paramIndex === undefined && obj.paramKey === undefined) {
    reader.fail(path, 'needs exactly one of paramIndex and paramKey, got neither');
  } else if (obj.paramIndex !== undefined && obj.paramKey !== undefined) {
    reader.fail(path, 'needs exactly one of paramIndex and paramKey, got both');
  }

  const metric = reader.oneOf(obj, 'metric', path, ['qps', 'concurrency'], D.metric);
  const threshold = reader.number(obj, 'threshold', path, COUNT);
  const behavior = reader.oneOf(obj, 'behavior', path, ['reject', 'throttle'], D.behavior);
  if (metric === 'concurrency' && behavior !== 'reject') {
    reader.fail(join(path, 'behavior'), `must be 'reject' for a concurrency rule, got '${behavior}'`);
  }
  const durationMs = reader.number(obj, 'durationMs', path, { above: 0 }, D.durationMs);
  const burstCount = reader.number(obj, 'burstCount', path, COUNT, D.burstCount);
  const maxQueueingTimeMs = reader.number(obj, 'maxQueueingTimeMs', path, { min: 0 }, D.maxQueueingTimeMs);
  const capacity = reader.number(obj, 'capacity', path, { min: 1, max: D.maxCapacity, integer: true }, defaultCapacity(metric, durationMs));
  const specificItems = readSpecificItems(obj.specificItems, join(path, 'specificItems'), reader);
  checkSafeBucket(threshold, burstCount, specificItems, path, reader);

  // Sentinel's hotspot cluster mode is QPS only. Without a cluster backend, a cluster rule limits as its local rule.
  const clusterSupport = metric === 'qps' ? QPS_CLUSTER : { unsupported: `cluster mode applies to qps rules only, got metric '${metric}'` };
  const cluster = normalizeClusterOptions(obj.cluster, path, reader, clusterSupport);
  return {
    resource,
    ...(paramKey !== undefined ? { paramKey } : { paramIndex: paramIndex ?? 0 }),
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
  if (metric === 'concurrency') return D.concurrencyCapacity;
  return Math.min(D.capacityPerSecond * Math.ceil(durationMs / 1000), D.maxDefaultCapacity);
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
  const limit = Number.MAX_SAFE_INTEGER;
  if (threshold + burstCount > limit) {
    reader.fail(join(path, 'threshold'), `threshold + burstCount must be at most ${limit}, got ${threshold + burstCount}`);
  }
  for (const key of Object.keys(items)) {
    const item = items[key]!;
    if (item + burstCount > limit) {
      reader.fail(itemPath(join(path, 'specificItems'), key), `item + burstCount must be at most ${limit}, got ${item + burstCount}`);
    }
  }
}
