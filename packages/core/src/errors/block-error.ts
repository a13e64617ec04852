import type { ErrorCode } from './error-codes';

/** The brand that marks block errors across copies of the package. */
export const BLOCK_ERROR_BRAND = Symbol.for('floodgate.blockError');

/** What every block error carries. */
export interface BlockErrorOptions<R> {
  /** The guarded resource. */
  readonly resource: string;
  /** The rule that refused the call, as it is in force (normalised). */
  readonly rule: R;
  /** How long until a retry can pass, in ms, where the rule knows it. */
  readonly retryAfterMs?: number | undefined;
  /** The caller's origin, if the entry named one. */
  readonly origin?: string | undefined;
}

/**
 * A call refused by a rule. Abstract: a block is always one of `FlowBlockError`,
 * `HotParamBlockError`, `CircuitOpenError`, `SystemBlockError` or `AuthorityBlockError`.
 * Block errors are control flow, not bugs: they capture no stack trace.
 */
export abstract class BlockError<R = unknown> extends Error {
  /** The stable error code. */
  abstract readonly code: ErrorCode;
  /** The guarded resource. */
  readonly resource: string;
  /** The rule that refused the call. */
  readonly rule: R;
  /** How long until a retry can pass, in ms; `undefined` when the wait is not known. */
  readonly retryAfterMs: number | undefined;
  /** The caller's origin, if the entry named one (`''` otherwise). */
  readonly origin: string;

  constructor(message: string, options: BlockErrorOptions<R>) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.resource = options.resource;
    this.rule = options.rule;
    this.retryAfterMs = options.retryAfterMs;
    this.origin = options.origin ?? '';
  }
}
Object.defineProperty(BlockError.prototype, BLOCK_ERROR_BRAND, { value: true });

/**
 * Whether `value` is a Floodgate block error, also when it comes from another copy of the
 * package (where `instanceof` fails).
 */
export function isBlockError(value: unknown): value is BlockError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BLOCK_ERROR_BRAND] === true;
}
