import type { AuthorityRule } from '../authority/authority-rule';
import { BlockError, type BlockErrorOptions } from './block-error';

/** An authority rule refused the caller's origin. Code `ERR_AUTHORITY_BLOCKED`. */
export class AuthorityBlockError extends BlockError<AuthorityRule> {
  override readonly code = 'ERR_AUTHORITY_BLOCKED' as const;
  override readonly name = 'AuthorityBlockError';

  constructor(options: BlockErrorOptions<AuthorityRule>) {
    super(`Origin "${options.origin ?? ''}" is not allowed on "${options.resource}"`, options);
  }
}
