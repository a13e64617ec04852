import type { Checker } from '../engine/checker';
import type { Entry } from '../engine/entry';
import { AuthorityBlockError } from '../errors/authority-block-error';
import type { AuthorityRule } from './authority-rule';

/**
 * Checks one authority rule: with `allow`, an origin not listed is refused; with `deny`, a
 * listed origin is refused. A call without an origin always passes (as Sentinel).
 */
export class AuthorityChecker implements Checker {
  private readonly origins: ReadonlySet<string>;

  constructor(private readonly rule: AuthorityRule) {
    this.origins = new Set(rule.origins);
  }

  check(entry: Entry): AuthorityBlockError | undefined {
    const origin = entry.origin;
    if (origin === '') return undefined;
    const listed = this.origins.has(origin);
    if (listed === (this.rule.strategy === 'allow')) return undefined;
    return new AuthorityBlockError({ resource: entry.resource, rule: this.rule, origin });
  }
}
