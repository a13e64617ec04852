import type { HotParamRule } from '../hot-param/hot-param-rule';
import { BlockError, type BlockErrorOptions } from './block-error';

/** A hotspot rule refused the call for one parameter value. Code `ERR_HOT_PARAM_BLOCKED`. */
export class HotParamBlockError extends BlockError<HotParamRule> {
  /** The parameter value that was limited. */
  readonly value: unknown;

  constructor(options: BlockErrorOptions<HotParamRule> & { readonly value: unknown }) {
    super(options);
    this.value = options.value;
  }

  get code(): 'ERR_HOT_PARAM_BLOCKED' {
    return 'ERR_HOT_PARAM_BLOCKED';
  }

  get name(): string {
    return 'HotParamBlockError';
  }

  get message(): string {
    return `Blocked by a hotspot rule on "${this.resource}" for value ${String(this.value)}`;
  }
}
