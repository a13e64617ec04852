/**
 * `@floodgate/core/cluster`: the interface a cluster backend implements (`redisCluster()` from
 * `@floodgate/redis` is one). Users of cluster mode need only `@floodgate/redis`.
 * @packageDocumentation
 */
export type { ClusterRuleOptions, ClusterRuleConfig, ClusterThresholdType } from './cluster-rule-options';
export type {
  ClusterBackend,
  ClusterLimiter,
  ClusterLimiterSpec,
  ClusterWindowSpec,
  ClusterPaceSpec,
  ClusterTokenBucketSpec,
  ClusterDecision,
  ClusterPass,
  ClusterWait,
  ClusterBlock,
  ClusterUnavailable,
  ClusterUnavailableReason,
} from './cluster-backend';
export { CLUSTER_RULE_DEFAULTS } from './normalize-cluster-options';
