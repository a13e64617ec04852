import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import type { Entry } from '../kernel/entry';
import { BlockError, type Refusal } from '../kernel/errors';
import { show, type RuleReader } from '../kernel/rule-reader';
import type { Checker, RuleKind } from '../kernel/rule-kind';

/** An authority rule as written by users (JSON-serialisable). */
export interface AuthorityRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * `allow`: only the listed origins pass; `deny`: the listed origins are refused. Sentinel's
   * WHITE / BLACK authority strategies.
   * @defaultValue 'allow'
   */
  readonly strategy?: 'allow' | 'deny';
  /** The origins the strategy applies to (exact match). */
  readonly origins: readonly string[];
}

/** An authority rule in force. */
export interface AuthorityRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** `allow`: only the listed origins pass; `deny`: the listed origins are refused. */
  readonly strategy: Required<AuthorityRuleOptions>['strategy'];
  /** The origins the strategy applies to. */
  readonly origins: readonly string[];
}

/** Defaults of an authority rule's optional fields. */
export const AUTHORITY_RULE_DEFAULTS = Object.freeze({
  /** Only the listed origins pass (Sentinel's default WHITE strategy). */
  strategy: 'allow',
} as const);

/** The authority kind's name: its block errors' `kind`, its rule ids' prefix (`authority#0`). */
export const AUTHORITY_KIND_NAME = 'authority' as const;

/** An authority rule refused the caller's origin. Code `ERR_AUTHORITY_BLOCKED`. */
export class AuthorityBlockError extends BlockError<AuthorityRule> {
  /** Always `'ERR_AUTHORITY_BLOCKED'`. */
  get code(): 'ERR_AUTHORITY_BLOCKED' {
    return 'ERR_AUTHORITY_BLOCKED';
  }
  /** Always the kind's name (`AUTHORITY_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return AUTHORITY_KIND_NAME;
  }
  /** Always `'forbidden'`: the caller may not call the resource (403 over HTTP). */
  get refusal(): Refusal {
    return 'forbidden';
  }
  /** `'The caller is not allowed to access this resource.'` */
  get detail(): string {
    return 'The caller is not allowed to access this resource.';
  }
  /** Always `'AuthorityBlockError'`. */
  get name(): string {
    return 'AuthorityBlockError';
  }
  /** E.g. `Origin "partner" is not allowed on "getUser"`. */
  get message(): string {
    return `Origin "${this.origin}" is not allowed on "${this.resource}"`;
  }
}

/**
 * Checks one authority rule: with `allow`, an origin not listed is refused; with `deny`, a
 * listed origin is refused. A call without an origin always passes (as Sentinel).
 */
class AuthorityChecker implements Checker {
  private readonly origins: ReadonlySet<string>;
  private readonly allow: boolean;

  constructor(private readonly rule: AuthorityRule) {
    this.origins = new Set(rule.origins);
    this.allow = rule.strategy === 'allow';
  }

  check(entry: Entry): AuthorityBlockError | undefined {
    const origin = entry.origin;
    if (origin === '' || this.origins.has(origin) === this.allow) return undefined;
    return new AuthorityBlockError({ resource: entry.resource, rule: this.rule, origin });
  }
}

/** Validates one authority rule and resolves its defaults. */
function normalizeAuthorityRule(input: unknown, path: string, reader: RuleReader): AuthorityRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, ['resource', 'strategy', 'origins'], path);
  const resource = reader.resource(obj, 'resource', path);
  const strategy = reader.oneOf(obj, 'strategy', path, ['allow', 'deny'], AUTHORITY_RULE_DEFAULTS.strategy);
  const list = reader.array(obj.origins, `${path}.origins`);
  const origins: string[] = [];
  list.forEach((origin, i) => {
    if (typeof origin === 'string' && origin.length > 0) origins.push(origin);
    else reader.fail(`${path}.origins[${i}]`, `must be a non-empty string, got ${show(origin)}`);
  });
  return { resource, strategy, origins: Object.freeze(origins) };
}

/** Authority rules: allow or deny callers by origin (Sentinel's AuthoritySlot). */
export const authorityKind: RuleKind<'authority', AuthorityRule, AuthorityRuleOptions> = {
  key: 'authority',
  name: AUTHORITY_KIND_NAME,
  scope: 'resource',
  codes: { ERR_AUTHORITY_BLOCKED: "An authority rule refused the caller's origin." },
  normalize: normalizeAuthorityRule,
  resourceOf: (rule) => rule.resource,
  compile: (rules) => ({ checkers: rules.map((rule) => new AuthorityChecker(rule)) }),
};
