import type { Checker } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import type { FlowRule } from '../flow/flow-rule';
import type { ClusterBackend, ClusterLimiterSpec } from './cluster-backend';
import { ClusterFlowChecker } from './cluster-flow-checker';
import type { ClusterKeys } from './cluster-keys';

/** The pacing window of flow rules: `threshold` calls per second. */
const FLOW_DURATION_MS = 1000;

/**
 * Wraps the local checker of a flow rule with `cluster` set into a {@link ClusterFlowChecker}
 * on `backend`; the local checker stays as its fallback.
 */
export function compileClusterFlowRule(
  rule: FlowRule,
  local: Checker,
  backend: ClusterBackend,
  keys: ClusterKeys,
  namedOrigins: ReadonlySet<string>,
  ctx: CompileContext,
): ClusterFlowChecker {
  const cluster = rule.cluster!;
  const key = keys.next('flow', rule.resource, rule.behavior, rule.limitOrigin);
  const spec: ClusterLimiterSpec =
    rule.behavior === 'throttle'
      ? {
          kind: 'pace',
          key,
          threshold: rule.threshold,
          thresholdType: cluster.thresholdType,
          maxQueueingTimeMs: rule.maxQueueingTimeMs!,
          durationMs: FLOW_DURATION_MS,
        }
      : { kind: 'window', key, threshold: rule.threshold, thresholdType: cluster.thresholdType, leaseTokens: cluster.leaseTokens };
  const limiter = ctx.reuse('clusterFlow', { ...spec, backend: backend.name }, () => backend.limiter(spec));
  return new ClusterFlowChecker(rule, local, limiter, backend.name, ctx.events, namedOrigins);
}
