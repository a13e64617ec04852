/** The brand that marks block errors across copies of the package. */
export const BLOCK_ERROR_BRAND = Symbol.for('floodgate.blockError');

/**
 * The codes of the errors the kernel itself throws. Each rule kind adds the code of its block
 * error; the engine lists them all in `ErrorCodes`. Codes are stable: a retired code is never
 * reused.
 */
export const KERNEL_ERROR_CODES = Object.freeze({
  /** A rule set, rule or option failed validation. */
  ERR_INVALID_RULE: 'A rule or option failed validation; nothing was changed.',
  /** A guarded call did not settle within its `timeoutMs`. */
  ERR_TIMEOUT: 'A guarded call did not settle within its timeoutMs.',
});

/**
 * Why a call was refused, in terms any protocol can answer: `'quota'` (a rate or concurrency
 * quota is used up: HTTP 429), `'capacity'` (the service or a dependency cannot take the call
 * now: HTTP 503), `'forbidden'` (the caller may not call: HTTP 403).
 */
export type Refusal = 'quota' | 'capacity' | 'forbidden';

/** The quota a QPS rule enforces, as the IETF RateLimit headers describe it. */
export interface QuotaPolicy {
  /** The policy's name in draft-8 headers and in `violated-policies`: `'flow'` or `'hotspot'`. */
  readonly name: string;
  /** Requests allowed per window (the rule's threshold, rounded down to an integer). */
  readonly quota: number;
  /** The window in whole seconds. */
  readonly windowSeconds: number;
}

/** What every block error carries. */
export interface BlockErrorOptions<R> {
  /** The guarded resource. */
  readonly resource: string;
  /** The rule that refused the call, as it is in force (normalised). */
  readonly rule: R;
  /**
   * How long until a retry can pass, in ms, where the rule knows it. Kept as a finite number
   * >= 0 (a negative wait is 0); a wait that is not a finite number is not known (`undefined`).
   */
  readonly retryAfterMs?: number | undefined;
  /** The caller's origin, if the entry named one. */
  readonly origin?: string | undefined;
}

/**
 * A call refused by a rule. Abstract: each rule kind has its own subclass (`FlowBlockError`,
 * `HotParamBlockError`, `CircuitOpenError`, `SystemBlockError`, `AuthorityBlockError`).
 *
 * Block errors are control flow, not bugs: they are `instanceof Error` but capture no stack
 * trace (`stack` is just the name and message), which keeps the block path cheap. Their
 * prototype chain runs to `Error.prototype`, but their constructor does not run `Error`'s: V8's
 * costs about 0.3 µs even with `Error.stackTraceLimit = 0`, forty times the rest of a block, and
 * under attack most calls are blocked; `message` and `stack` are computed on read instead.
 */
export abstract class BlockError<R = unknown> implements Error {
  /** The guarded resource. */
  readonly resource: string;
  /** The rule that refused the call. */
  readonly rule: R;
  /**
   * How long until a retry can pass, in ms: a finite number >= 0, or `undefined` when the wait is
   * not known (or is not a finite number: no `NaN` or `Infinity` reaches a header or a log).
   */
  readonly retryAfterMs: number | undefined;
  /** The caller's origin, if the entry named one (`''` otherwise). */
  readonly origin: string;

  /** @param options - what refused the call, and where. */
  constructor(options: BlockErrorOptions<R>) {
    this.resource = options.resource;
    this.rule = options.rule;
    this.retryAfterMs = knownWait(options.retryAfterMs);
    this.origin = options.origin ?? '';
  }

  /** The stable error code, e.g. `'ERR_FLOW_BLOCKED'`. */
  abstract get code(): string;
  /** The kind of rule that refused the call, by the kind's name: `'flow'`, `'hotParam'`, `'circuitBreaker'`, `'system'`, `'authority'`, ... */
  abstract get kind(): string;
  /** Why the call was refused, for protocols to answer (429, 503, 403 over HTTP). */
  abstract get refusal(): Refusal;
  /** A fixed sentence for clients, naming no caller data (a problem body's `detail`). */
  abstract get detail(): string;
  /** The class name, e.g. `'FlowBlockError'`. */
  abstract get name(): string;
  /** What refused the call, in words. Computed on read. */
  abstract get message(): string;

  /** The quota behind the block, for QPS rules (RateLimit headers); `undefined` for others. */
  quota(): QuotaPolicy | undefined {
    return undefined;
  }

  /**
   * What the refusal is about, where a rule limits each of many things apart (a hotspot rule: the
   * parameter value): a rule enforced by percentage (`enforcePercent`) decides by it, so one
   * caller is always refused or always let through. `undefined` (decided per call) for the rest.
   */
  get enforcementKey(): unknown {
    return undefined;
  }

  /** `Name: message`: block errors carry no stack trace. */
  get stack(): string {
    return `${this.name}: ${this.message}`;
  }

  /** A plain object for logs and JSON. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      kind: this.kind,
      message: this.message,
      resource: this.resource,
      origin: this.origin,
      retryAfterMs: this.retryAfterMs,
      rule: this.rule,
    };
  }
}
Object.setPrototypeOf(BlockError.prototype, Error.prototype);
Object.defineProperty(BlockError.prototype, BLOCK_ERROR_BRAND, { value: true });

/** A wait as block errors carry it: finite and >= 0 (a negative one is 0), else not known. */
function knownWait(ms: number | undefined): number | undefined {
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  return ms > 0 ? ms : 0;
}

/**
 * Whether `value` is a Floodgate block error, also when it comes from another copy of the
 * package (where `instanceof` fails).
 */
export function isBlockError(value: unknown): value is BlockError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BLOCK_ERROR_BRAND] === true;
}

/** One problem found while validating rules or options. */
export interface RuleIssue {
  /** Where the problem is, e.g. `flow[2].threshold`. */
  readonly path: string;
  /** What is wrong, naming the allowed range and the value given. */
  readonly message: string;
}

/** Most issues a {@link RuleValidationError} names in its message; `issues` holds them all. */
export const MAX_ISSUES_IN_MESSAGE = 20;

/**
 * A rule set, rule or option failed validation. Lists every problem; whatever was in force
 * before stays in force. Code `ERR_INVALID_RULE`. The message names the first 20 problems
 * and counts the rest, and cuts long values and paths, so a huge bad rule set cannot make a
 * huge message; `issues` keeps every problem whole.
 */
export class RuleValidationError extends Error {
  /** Always `'ERR_INVALID_RULE'`. */
  readonly code = 'ERR_INVALID_RULE' as const;
  /** Always `'RuleValidationError'`. */
  override readonly name = 'RuleValidationError';
  /** Every problem found, by path. */
  readonly issues: readonly RuleIssue[];

  /**
   * @param issues - every problem found, by path.
   * @param context - what failed, the message's start. @defaultValue 'Invalid rules'
   */
  constructor(issues: readonly RuleIssue[], context = 'Invalid rules') {
    const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((i) => `${shortPath(i.path)}: ${i.message}`);
    const more = issues.length - shown.length;
    super(`${context}: ${shown.join('; ')}${more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : ''}`);
    this.issues = issues;
  }
}

/** Most characters of an issue's path shown in a message (a path holds the input's field names). */
const SHOWN_PATH_CHARS = 200;

/** `path`, cut after 200 characters, saying how much was cut. */
function shortPath(path: string): string {
  return path.length <= SHOWN_PATH_CHARS
    ? path
    : `${path.slice(0, SHOWN_PATH_CHARS)}… (${path.length} characters, ${path.length - SHOWN_PATH_CHARS} cut)`;
}

/**
 * A guarded call did not settle within its `timeoutMs`. Code `ERR_TIMEOUT`. Not a block: the
 * call was admitted, and its timeout counts as a failure (and a slow call) for circuit breakers.
 * The call's `AbortSignal` aborts with this error as its reason.
 */
export class TimeoutError extends Error {
  /** Always `'ERR_TIMEOUT'`. */
  readonly code = 'ERR_TIMEOUT' as const;
  /** Always `'TimeoutError'`. */
  override readonly name = 'TimeoutError';
  /** The guarded resource. */
  readonly resource: string;
  /** The timeout that elapsed, in ms. */
  readonly timeoutMs: number;

  /**
   * @param resource - the guarded resource.
   * @param timeoutMs - the timeout that elapsed, in ms.
   */
  constructor(resource: string, timeoutMs: number) {
    super(`"${resource}" did not settle within ${timeoutMs} ms`);
    this.resource = resource;
    this.timeoutMs = timeoutMs;
  }
}
