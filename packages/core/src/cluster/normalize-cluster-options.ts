import { join, type RuleReader } from '../rules/rule-reader';
import type { ClusterRuleConfig } from './cluster-rule-options';

/** Defaults of a rule's `cluster` settings. */
export const CLUSTER_RULE_DEFAULTS = Object.freeze({
  /** One threshold shared by every instance. */
  thresholdType: 'global',
  /** Decide locally while the backend is unavailable (Sentinel's `fallbackToLocalWhenFail`). */
  fallbackToLocal: true,
} as const);

/** Validates a rule's `cluster` field; `undefined` when absent. */
export function normalizeClusterOptions(value: unknown, path: string, reader: RuleReader): ClusterRuleConfig | undefined {
  if (value === undefined) return undefined;
  const at = join(path, 'cluster');
  const obj = reader.object(value, at);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, ['thresholdType', 'fallbackToLocal'], at);
  return {
    thresholdType: reader.oneOf(obj, 'thresholdType', at, ['global', 'perInstance'], CLUSTER_RULE_DEFAULTS.thresholdType),
    fallbackToLocal: reader.boolean(obj, 'fallbackToLocal', at, CLUSTER_RULE_DEFAULTS.fallbackToLocal),
  };
}
