import type { CompileContext } from '../engine/compile-context';
import type { HotParamChecker } from '../hot-param/hot-param-checker';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { ClusterBackend, ClusterLimiterSpec } from './cluster-backend';
import { ClusterHotParamChecker } from './cluster-hot-param-checker';
import type { ClusterKeys } from './cluster-keys';

/**
 * Wraps the local checker of a QPS hotspot rule with `cluster` set into a
 * {@link ClusterHotParamChecker} on `backend`; the local checker stays as its fallback.
 * `reject` rules become a token bucket per value in the store, `throttle` rules shared pacing
 * per value.
 */
export function compileClusterHotParamRule(
  rule: HotParamRule,
  local: HotParamChecker,
  backend: ClusterBackend,
  keys: ClusterKeys,
  ctx: CompileContext,
): ClusterHotParamChecker {
  const cluster = rule.cluster!;
  const param = rule.paramKey !== undefined ? `key:${rule.paramKey}` : `index:${rule.paramIndex}`;
  const key = keys.next('hotParam', rule.resource, rule.behavior, param);
  const base = { key, threshold: rule.threshold, thresholdType: cluster.thresholdType, durationMs: rule.durationMs };
  const spec: ClusterLimiterSpec =
    rule.behavior === 'throttle'
      ? { kind: 'pace', ...base, maxQueueingTimeMs: rule.maxQueueingTimeMs }
      : { kind: 'tokenBucket', ...base, burstCount: rule.burstCount };
  const limiter = ctx.reuse('clusterHotParam', { ...spec, backend: backend.name }, () => backend.limiter(spec));
  return new ClusterHotParamChecker(rule, local, limiter, backend.name, ctx.events);
}
