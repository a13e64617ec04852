import type { RuleReader } from '../rules/rule-reader';
import type { AuthorityRule } from './authority-rule';

/** Defaults of an authority rule's optional fields. */
export const AUTHORITY_RULE_DEFAULTS = Object.freeze({
  /** Only the listed origins pass (Sentinel's default WHITE strategy). */
  strategy: 'allow',
} as const);

/** Validates one authority rule and resolves its defaults. */
export function normalizeAuthorityRule(input: unknown, path: string, reader: RuleReader): AuthorityRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, ['resource', 'strategy', 'origins'], path);
  const resource = reader.string(obj, 'resource', path);
  const strategy = reader.oneOf(obj, 'strategy', path, ['allow', 'deny'], AUTHORITY_RULE_DEFAULTS.strategy);
  const list = reader.array(obj.origins, `${path}.origins`);
  const origins: string[] = [];
  list.forEach((origin, i) => {
    if (typeof origin === 'string' && origin.length > 0) origins.push(origin);
    else reader.fail(`${path}.origins[${i}]`, `must be a non-empty string, got ${JSON.stringify(origin)}`);
  });
  return { resource, strategy, origins: Object.freeze(origins) };
}
