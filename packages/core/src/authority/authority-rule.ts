/**
 * `allow`: only the listed origins pass; `deny`: the listed origins are refused.
 * Sentinel's WHITE / BLACK authority strategies.
 */
export type AuthorityStrategy = 'allow' | 'deny';

/** An authority rule as written by users (JSON-serialisable). */
export interface AuthorityRuleOptions {
  /** The guarded resource. */
  readonly resource: string;
  /** @defaultValue 'allow' */
  readonly strategy?: AuthorityStrategy;
  /** The origins the strategy applies to (exact match). */
  readonly origins: readonly string[];
}

/** An authority rule in force. */
export interface AuthorityRule {
  readonly resource: string;
  readonly strategy: AuthorityStrategy;
  readonly origins: readonly string[];
}
