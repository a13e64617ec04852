import { flowClusterSupport } from '../cluster/flow-cluster-support';
import { normalizeClusterOptions } from '../cluster/normalize-cluster-options';
import type { RuleReader } from '../rules/rule-reader';
import { FLOW_RULE_DEFAULTS as D } from './flow-rule-defaults';
import type { FlowBehavior, FlowRule } from './flow-rule';

const FIELDS = [
  'resource', 'metric', 'threshold', 'behavior', 'warmUpPeriodMs', 'coldFactor',
  'maxQueueingTimeMs', 'strategy', 'refResource', 'limitOrigin', 'cluster',
] as const;

const WARM: readonly FlowBehavior[] = ['warmUp', 'warmUpThrottle'];
const QUEUED: readonly FlowBehavior[] = ['throttle', 'warmUpThrottle'];

/**
 * Validates one flow rule and resolves its defaults. Problems go to `reader`; the result is
 * only meaningful when none were found.
 */
export function normalizeFlowRule(input: unknown, path: string, reader: RuleReader): FlowRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const resource = reader.string(obj, 'resource', path);
  const metric = reader.oneOf(obj, 'metric', path, ['qps', 'concurrency'], D.metric);
  const threshold = reader.number(obj, 'threshold', path, { min: 0 });
  const behavior = reader.oneOf(obj, 'behavior', path, ['reject', 'warmUp', 'throttle', 'warmUpThrottle'], D.behavior);
  if (metric === 'concurrency' && behavior !== 'reject') {
    reader.fail(`${path}.behavior`, `must be 'reject' for a concurrency rule, got '${behavior}'`);
  }
  const strategy = reader.oneOf(obj, 'strategy', path, ['direct', 'relate'], D.strategy);
  const refResource = reader.string(obj, 'refResource', path, undefined);
  if (strategy === 'relate' && refResource === undefined && obj.refResource === undefined) {
    reader.fail(`${path}.refResource`, "is required when strategy is 'relate'");
  }
  const warm = WARM.includes(behavior);
  const queued = QUEUED.includes(behavior);
  const warmUpPeriodMs = warm
    ? reader.number(obj, 'warmUpPeriodMs', path, { above: 0 })
    : reader.number(obj, 'warmUpPeriodMs', path, { above: 0 }, undefined);
  const coldFactor = reader.number(obj, 'coldFactor', path, { above: 1 }, D.coldFactor);
  const maxQueueingTimeMs = reader.number(obj, 'maxQueueingTimeMs', path, { min: 0 }, D.maxQueueingTimeMs);
  const limitOrigin = reader.string(obj, 'limitOrigin', path, D.limitOrigin);
  const cluster = normalizeClusterOptions(obj.cluster, path, reader, flowClusterSupport(metric, behavior, strategy));
  return {
    resource,
    metric,
    threshold,
    behavior,
    ...(warm ? { warmUpPeriodMs, coldFactor } : {}),
    ...(queued ? { maxQueueingTimeMs } : {}),
    strategy,
    ...(strategy === 'relate' && refResource !== undefined ? { refResource } : {}),
    limitOrigin,
    ...(cluster ? { cluster } : {}),
  };
}
