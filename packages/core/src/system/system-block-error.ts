import { BlockError, type Refusal } from '../kernel/errors';

/**
 * System protection refused the call. Code `ERR_SYSTEM_BLOCKED`. Reserved until the system
 * rule kind lands: adapters already map it (503).
 */
export class SystemBlockError<R = unknown> extends BlockError<R> {
  get code(): 'ERR_SYSTEM_BLOCKED' {
    return 'ERR_SYSTEM_BLOCKED';
  }
  get kind(): 'system' {
    return 'system';
  }
  get refusal(): Refusal {
    return 'capacity';
  }
  get detail(): string {
    return 'The service is temporarily overloaded.';
  }
  get name(): string {
    return 'SystemBlockError';
  }
  get message(): string {
    return `Blocked by system protection on "${this.resource}"`;
  }
}
