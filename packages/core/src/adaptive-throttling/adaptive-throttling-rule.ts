import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import { BlockError, type Refusal } from '../kernel/errors';
import { MAX_DURATION_MS, type RuleReader } from '../kernel/rule-reader';

/**
 * A client-side adaptive throttling rule as written by users (JSON-serialisable): the Google SRE
 * book's ("Handling Overload"). Over a trailing window, `requests` counts the calls that reached
 * the rule and `accepts` those the dependency accepted (completed without a traced error or a
 * pushback); each new call is refused locally with probability
 * `max(0, (requests − k × accepts) / (requests + 1))`. While the dependency accepts at least one
 * call in `k`, nothing is refused; as it rejects more, the client sheds the excess itself
 * instead of sending it.
 *
 * @example
 * fg.loadRules({ adaptiveThrottling: [{ resource: 'api.example.com', k: 2 }] });
 */
export interface AdaptiveThrottlingRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * The book's K, at least 1: how many requests per accepted one are sent before any is refused.
   * Lower is more aggressive (1.1 wastes little of the dependency's effort on rejections), higher
   * lets more through.
   * @defaultValue 2
   */
  readonly k?: number;
  /** The trailing window requests and accepts are counted over, in ms (>= 10). @defaultValue 120000 */
  readonly windowMs?: number;
}

/** An adaptive throttling rule in force: validated, with every default resolved. */
export interface AdaptiveThrottlingRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** The book's K: requests sent per accepted one before any is refused. */
  readonly k: number;
  /** The trailing window requests and accepts are counted over, in ms. */
  readonly windowMs: number;
}

/** Defaults of an adaptive throttling rule's optional fields: the SRE book's. */
export const ADAPTIVE_THROTTLING_RULE_DEFAULTS = Object.freeze({
  /** The book's K = 2: up to twice the accepted requests are sent. */
  k: 2,
  /** Two minutes of history, as the book suggests. */
  windowMs: 120_000,
} as const);

/** The adaptive throttling kind's name: its block errors' `kind`, its rule ids' prefix (`adaptiveThrottling#0`). */
export const ADAPTIVE_THROTTLING_KIND_NAME = 'adaptiveThrottling' as const;

/**
 * The call was refused locally by client-side adaptive throttling: the resource's dependency has
 * been rejecting calls, and this one was shed to spare it. Code `ERR_ADAPTIVE_THROTTLED`; 503 over
 * HTTP.
 */
export class AdaptiveThrottlingError extends BlockError<AdaptiveThrottlingRule> {
  /** Always `'ERR_ADAPTIVE_THROTTLED'`. */
  get code(): 'ERR_ADAPTIVE_THROTTLED' {
    return 'ERR_ADAPTIVE_THROTTLED';
  }
  /** Always the kind's name (`ADAPTIVE_THROTTLING_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return ADAPTIVE_THROTTLING_KIND_NAME;
  }
  /** Always `'capacity'`: the dependency cannot take more calls now (503 over HTTP). */
  get refusal(): Refusal {
    return 'capacity';
  }
  /** `'A dependency is rejecting calls: this one was shed locally to spare it.'` */
  get detail(): string {
    return 'A dependency is rejecting calls: this one was shed locally to spare it.';
  }
  /** Always `'AdaptiveThrottlingError'`. */
  get name(): string {
    return 'AdaptiveThrottlingError';
  }
  /** E.g. `Call to "api.example.com" shed by adaptive throttling: its dependency has been rejecting calls`. */
  get message(): string {
    return `Call to "${this.resource}" shed by adaptive throttling: its dependency has been rejecting calls`;
  }
}

const FIELDS = ['resource', 'k', 'windowMs'] as const;

/** Validates one adaptive throttling rule: `k` >= 1, `windowMs` within [10, 2^31 − 1]; no unknown field. */
export function normalizeAdaptiveThrottlingRule(
  input: unknown,
  path: string,
  reader: RuleReader,
): AdaptiveThrottlingRule | undefined {
  const D = ADAPTIVE_THROTTLING_RULE_DEFAULTS;
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  return {
    resource: reader.resource(obj, 'resource', path),
    k: reader.number(obj, 'k', path, { min: 1 }, D.k),
    windowMs: reader.number(obj, 'windowMs', path, { min: 10, max: MAX_DURATION_MS }, D.windowMs),
  };
}
