/** How a cluster rule's threshold is shared between instances. */
export type ClusterThresholdType = 'global' | 'perInstance';

/**
 * Cluster settings of a flow or hotspot rule: with `cluster` set and a cluster backend given
 * to the engine, the rule takes its decision from the shared store, so the limit holds across
 * every process.
 */
export interface ClusterRuleOptions {
  /**
   * `'global'`: the threshold is shared by all instances; `'perInstance'`: the threshold is
   * multiplied by the number of live instances.
   * @defaultValue 'global'
   */
  readonly thresholdType?: ClusterThresholdType;
  /**
   * When the backend is slow or down: `true` decides by the local rule, `false` lets the call
   * pass.
   * @defaultValue true
   */
  readonly fallbackToLocal?: boolean;
  /**
   * Tokens an instance takes from the store per round trip (`reject` flow rules only), for
   * high-rate rules: calls are then decided in process from the lease, and a sync `entry()` can
   * use it too. Leased tokens count as admitted in the store when leased and expire at the end
   * of the 500 ms bucket they were leased in, so the limit is never exceeded, but unused leased
   * tokens are lost: the cluster may admit up to `leaseTokens - 1` fewer calls per instance per
   * bucket than the threshold. `0` asks the store on every call.
   * @defaultValue 0
   */
  readonly leaseTokens?: number;
}

/** {@link ClusterRuleOptions} with every default resolved. */
export interface ClusterRuleConfig {
  readonly thresholdType: ClusterThresholdType;
  readonly fallbackToLocal: boolean;
  readonly leaseTokens: number;
}
