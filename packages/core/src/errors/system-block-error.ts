import { BlockError, type BlockErrorOptions } from './block-error';

/**
 * System protection refused the call. Code `ERR_SYSTEM_BLOCKED`. Reserved: this release
 * has no system rules yet, but adapters map the code (503) so the hierarchy is complete.
 */
export class SystemBlockError<R = unknown> extends BlockError<R> {
  override readonly code = 'ERR_SYSTEM_BLOCKED' as const;
  override readonly name = 'SystemBlockError';

  constructor(options: BlockErrorOptions<R>) {
    super(`Blocked by system protection on "${options.resource}"`, options);
  }
}
