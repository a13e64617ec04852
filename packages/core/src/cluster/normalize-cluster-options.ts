import { join, type RuleReader } from '../rules/rule-reader';
import type { ClusterRuleConfig } from './cluster-rule-options';

/** Defaults of a rule's `cluster` settings. */
export const CLUSTER_RULE_DEFAULTS = Object.freeze({
  /** One threshold shared by every instance. */
  thresholdType: 'global',
  /** Decide locally while the backend is unavailable (Sentinel's `fallbackToLocalWhenFail`). */
  fallbackToLocal: true,
  /** No leasing: one round trip to the store per call. */
  leaseTokens: 0,
} as const);

/** Which cluster settings a rule can take, from what kind of rule it is. */
export interface ClusterSupport {
  /** Why this rule cannot be a cluster rule at all; `undefined` when it can. */
  readonly unsupported?: string | undefined;
  /** Whether the rule may lease tokens (`reject` flow rules). @defaultValue false */
  readonly leasable?: boolean;
}

/**
 * Validates a rule's `cluster` field; `undefined` when absent. `support` says what the rule can
 * take (a rule kind the backend cannot enforce is rejected at load, not ignored).
 */
export function normalizeClusterOptions(
  value: unknown,
  path: string,
  reader: RuleReader,
  support: ClusterSupport = {},
): ClusterRuleConfig | undefined {
  if (value === undefined) return undefined;
  const at = join(path, 'cluster');
  const obj = reader.object(value, at);
  if (obj === undefined) return undefined;
  if (support.unsupported !== undefined) reader.fail(at, support.unsupported);
  reader.knownKeys(obj, ['thresholdType', 'fallbackToLocal', 'leaseTokens'], at);
  const leaseTokens = reader.number(obj, 'leaseTokens', at, { min: 0, integer: true }, CLUSTER_RULE_DEFAULTS.leaseTokens);
  if (leaseTokens > 0 && support.leasable !== true) {
    reader.fail(join(at, 'leaseTokens'), `applies to flow rules with behavior 'reject' only, got ${leaseTokens}`);
  }
  return {
    thresholdType: reader.oneOf(obj, 'thresholdType', at, ['global', 'perInstance'], CLUSTER_RULE_DEFAULTS.thresholdType),
    fallbackToLocal: reader.boolean(obj, 'fallbackToLocal', at, CLUSTER_RULE_DEFAULTS.fallbackToLocal),
    leaseTokens,
  };
}
