import type { FlowBehavior, FlowMetric, FlowStrategy } from '../flow/flow-rule';
import type { ClusterSupport } from './normalize-cluster-options';

const REJECT: ClusterSupport = Object.freeze({ leasable: true });
const THROTTLE: ClusterSupport = Object.freeze({});

/**
 * Which cluster settings a flow rule can take. The store enforces QPS rules that `reject`
 * (a shared sliding window) or `throttle` (shared pacing), counting the resource's own
 * traffic. Concurrency, warm-up and `relate` rules stay local, as in Sentinel's token server,
 * which only checks QPS: a `cluster` field on them is a load error, not silently ignored.
 */
export function flowClusterSupport(metric: FlowMetric, behavior: FlowBehavior, strategy: FlowStrategy): ClusterSupport {
  if (metric !== 'qps') return { unsupported: `cluster mode applies to qps rules only, got metric '${metric}'` };
  if (strategy !== 'direct') return { unsupported: `cluster mode applies to strategy 'direct' only, got '${strategy}'` };
  if (behavior === 'reject') return REJECT;
  if (behavior === 'throttle') return THROTTLE;
  return { unsupported: `cluster mode applies to behavior 'reject' or 'throttle' only, got '${behavior}'` };
}
