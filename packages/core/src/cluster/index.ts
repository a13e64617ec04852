/**
 * `@floodgate/core/cluster`: the interface a cluster backend implements (`redisCluster()` from
 * `@floodgate/redis` is one). Users of cluster mode need only `@floodgate/redis`.
 * @packageDocumentation
 */
export {
  CLUSTER_RULE_DEFAULTS,
  type ClusterRuleOptions,
  type ClusterRuleConfig,
  type ClusterThresholdType,
  type ClusterBackend,
  type ClusterLimiter,
  type ClusterLimiterSpec,
  type ClusterLimiterSpecBase,
  type ClusterWindowSpec,
  type ClusterPaceSpec,
  type ClusterTokenBucketSpec,
  type ClusterDecision,
  type ClusterDecisionBase,
  type ClusterPass,
  type ClusterWait,
  type ClusterBlock,
  type ClusterUnavailable,
  type ClusterUnavailableReason,
  type ClusterBreaker,
  type ClusterBreakerSpec,
  type ClusterBreakerView,
  type ClusterBreakerDecision,
  type ClusterBreakerListener,
  type ClusterCircuitState,
  type ClusterProbeOutcome,
} from './cluster-contract';
