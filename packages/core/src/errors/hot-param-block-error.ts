import type { HotParamRule } from '../hot-param/hot-param-rule';
import { BlockError, type BlockErrorOptions } from './block-error';

/** A hotspot rule refused the call for one parameter value. Code `ERR_HOT_PARAM_BLOCKED`. */
export class HotParamBlockError extends BlockError<HotParamRule> {
  override readonly code = 'ERR_HOT_PARAM_BLOCKED' as const;
  override readonly name = 'HotParamBlockError';
  /** The parameter value that was limited. */
  readonly value: unknown;

  constructor(options: BlockErrorOptions<HotParamRule> & { readonly value: unknown }) {
    super(`Blocked by a hotspot rule on "${options.resource}" for value ${String(options.value)}`, options);
    this.value = options.value;
  }
}
