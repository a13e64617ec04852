import type { AuthorityRule } from '../authority/authority-rule';
import { BlockError } from './block-error';

/** An authority rule refused the caller's origin. Code `ERR_AUTHORITY_BLOCKED`. */
export class AuthorityBlockError extends BlockError<AuthorityRule> {
  get code(): 'ERR_AUTHORITY_BLOCKED' {
    return 'ERR_AUTHORITY_BLOCKED';
  }

  get name(): string {
    return 'AuthorityBlockError';
  }

  get message(): string {
    return `Origin "${this.origin}" is not allowed on "${this.resource}"`;
  }
}
