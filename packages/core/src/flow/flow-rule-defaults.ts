/** Defaults of a flow rule's optional fields. */
export const FLOW_RULE_DEFAULTS = Object.freeze({
  /** Count passed calls per second. */
  metric: 'qps',
  /** Block over the threshold. */
  behavior: 'reject',
  /** Sentinel's `csp.sentinel.flow.cold.factor`. */
  coldFactor: 3,
  /** Sentinel's `FlowRule.maxQueueingTimeMs`. */
  maxQueueingTimeMs: 500,
  /** Count the resource's own traffic. */
  strategy: 'direct',
  /** All callers, counted together (Sentinel's `limitApp = "default"`). */
  limitOrigin: 'default',
} as const);
