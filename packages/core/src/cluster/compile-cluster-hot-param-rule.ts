import type { Checker } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import type { HotParamChecker } from '../hot-param/hot-param-checker';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { ClusterBackend, ClusterLimiterSpec } from './cluster-backend';
import { ClusterHotParamChecker } from './cluster-hot-param-checker';
import { ClusterKeys } from './cluster-keys';

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

/**
 * One resource's compiled hotspot checkers, with those of QPS rules that have `cluster` set
 * wrapped to take their decision from the engine's cluster backend (unchanged without one).
 */
export function withClusterHotParams(checkers: readonly HotParamChecker[], ctx: CompileContext): Checker[] {
  const backend = ctx.cluster;
  if (backend === undefined || !checkers.some((checker) => checker.rule.cluster !== undefined)) return [...checkers];
  const keys = new ClusterKeys();
  return checkers.map((checker) =>
    checker.rule.cluster === undefined ? checker : compileClusterHotParamRule(checker.rule, checker, backend, keys, ctx),
  );
}
