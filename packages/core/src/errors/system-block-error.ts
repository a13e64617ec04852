import { BlockError } from './block-error';

/**
 * System protection refused the call. Code `ERR_SYSTEM_BLOCKED`. Reserved: this release
 * has no system rules yet, but adapters map the code (503) so the hierarchy is complete.
 */
export class SystemBlockError<R = unknown> extends BlockError<R> {
  get code(): 'ERR_SYSTEM_BLOCKED' {
    return 'ERR_SYSTEM_BLOCKED';
  }

  get name(): string {
    return 'SystemBlockError';
  }

  get message(): string {
    return `Blocked by system protection on "${this.resource}"`;
  }
}
