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
}

/** {@link ClusterRuleOptions} with every default resolved. */
export interface ClusterRuleConfig {
  readonly thresholdType: ClusterThresholdType;
  readonly fallbackToLocal: boolean;
}
