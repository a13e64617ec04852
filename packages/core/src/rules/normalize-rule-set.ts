import { normalizeAuthorityRule } from '../authority/normalize-authority-rule';
import { normalizeCircuitBreakerRule } from '../circuit-breaker/normalize-circuit-breaker-rule';
import { normalizeFlowRule } from '../flow/normalize-flow-rule';
import { normalizeHotParamRule } from '../hot-param/normalize-hot-param-rule';
import { RuleReader } from './rule-reader';
import { RULE_KINDS, type RuleKind, type RuleSet } from './rule-set';

type Normalizer = (input: unknown, path: string, reader: RuleReader) => RuleSet[RuleKind][number] | undefined;

const NORMALIZERS: { readonly [K in RuleKind]: Normalizer } = {
  authority: normalizeAuthorityRule,
  hotParams: normalizeHotParamRule,
  flow: normalizeFlowRule,
  circuitBreakers: normalizeCircuitBreakerRule,
};

/**
 * Validates a rule set (any subset of kinds) and resolves every default.
 * @throws RuleValidationError listing every problem, by path (`flow[2].threshold`).
 */
export function normalizeRuleSet(input: unknown): Partial<RuleSet> {
  const reader = new RuleReader();
  const obj = reader.object(input, 'rules');
  const result: Partial<Record<RuleKind, unknown[]>> = {};
  if (obj !== undefined) {
    reader.knownKeys(obj, RULE_KINDS, '');
    for (const kind of RULE_KINDS) {
      if (obj[kind] === undefined) continue;
      result[kind] = normalizeRules(kind, obj[kind], reader);
    }
  }
  reader.throwIfAny();
  return result as Partial<RuleSet>;
}

/**
 * Validates the rules of one kind.
 * @throws RuleValidationError listing every problem, by path (`flow[2].threshold`).
 */
export function normalizeRuleList<K extends RuleKind>(kind: K, input: unknown): RuleSet[K] {
  const reader = new RuleReader();
  const rules = normalizeRules(kind, input, reader);
  reader.throwIfAny();
  return rules as unknown as RuleSet[K];
}

function normalizeRules(kind: RuleKind, input: unknown, reader: RuleReader): unknown[] {
  const list = reader.array(input, kind);
  const normalize = NORMALIZERS[kind];
  return list.map((rule, i) => Object.freeze(normalize(rule, `${kind}[${i}]`, reader)));
}
