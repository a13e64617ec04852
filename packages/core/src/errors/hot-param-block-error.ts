import type { HotParamRule } from '../hot-param/hot-param-rule';
import { BlockError, type BlockErrorOptions } from './block-error';

/**
 * A hotspot rule refused the call for one parameter value. Code `ERR_HOT_PARAM_BLOCKED`.
 * `retryAfterMs` is the wait until the value's bucket refills (`reject`) or its next pacing
 * slot is close enough (`throttle`); `undefined` for `concurrency` rules and for values that
 * can never pass (threshold 0, or more tokens asked than the bucket holds).
 */
export class HotParamBlockError extends BlockError<HotParamRule> {
  /** The parameter value that was limited, as the call gave it (for an array, the element). */
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

  /** E.g. `Blocked by a hotspot rule on "getUser" for value "u1" (args[0])`. */
  get message(): string {
    const rule = this.rule;
    const value = typeof this.value === 'string' ? JSON.stringify(this.value) : String(this.value);
    const param = rule.paramKey !== undefined ? ` (params.${rule.paramKey})` : rule.paramIndex !== undefined ? ` (args[${rule.paramIndex}])` : '';
    return `Blocked by a hotspot rule on "${this.resource}" for value ${value}${param}`;
  }

  /** A plain object for logs and JSON, with the limited `value` (a bigint as its string). */
  override toJSON(): Record<string, unknown> {
    const value = typeof this.value === 'bigint' ? String(this.value) : this.value;
    return { ...super.toJSON(), value };
  }
}
