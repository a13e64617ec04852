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
 * An `Error` by prototype whose constructor does not run `Error`'s: V8's `Error` constructor
 * costs about 0.3 µs even with `Error.stackTraceLimit = 0`, forty times the rest of a block.
 * Under attack most calls are blocked, so block errors are built without it; `message` and
 * `stack` are computed on read instead.
 */
const CheapError = function CheapError(this: object) {
  // Nothing: fields are set by BlockError.
} as unknown as new () => object;
CheapError.prototype = Object.create(Error.prototype, {
  constructor: { value: CheapError, writable: true, configurable: true },
});

/**
 * A call refused by a rule. Abstract: a block is always one of `FlowBlockError`,
 * `HotParamBlockError`, `CircuitOpenError`, `SystemBlockError` or `AuthorityBlockError`.
 *
 * Block errors are control flow, not bugs: they are `instanceof Error` but capture no stack
 * trace (`stack` is just the name and message), which keeps the block path cheap.
 */
export abstract class BlockError<R = unknown> extends CheapError {
  /** The stable error code. */
  abstract get code(): ErrorCode;
  /** The guarded resource. */
  readonly resource: string;
  /** The rule that refused the call. */
  readonly rule: R;
  /** How long until a retry can pass, in ms; `undefined` when the wait is not known. */
  readonly retryAfterMs: number | undefined;
  /** The caller's origin, if the entry named one (`''` otherwise). */
  readonly origin: string;

  constructor(options: BlockErrorOptions<R>) {
    super();
    this.resource = options.resource;
    this.rule = options.rule;
    this.retryAfterMs = options.retryAfterMs;
    this.origin = options.origin ?? '';
  }

  /** The class name, e.g. `'FlowBlockError'`. */
  abstract get name(): string;

  /** What refused the call, in words. Computed on read. */
  abstract get message(): string;

  /** `Name: message`: block errors carry no stack trace. */
  get stack(): string {
    return `${this.name}: ${this.message}`;
  }

  /** A plain object for logs and JSON. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      resource: this.resource,
      origin: this.origin,
      retryAfterMs: this.retryAfterMs,
      rule: this.rule,
    };
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
