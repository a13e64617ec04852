import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import { BlockError, type Refusal } from '../kernel/errors';
import type { RuleReader } from '../kernel/rule-reader';

/**
 * A retry budget rule as written by users (JSON-serialisable): Finagle's `RetryBudget`. Over a
 * sliding window of `ttlMs`, the calls of the resource marked as retries or hedges
 * (`attempt: 'retry' | 'hedge'`) may number at most `retryRatio` × the first attempts in the
 * window, plus a reserve of `minRetriesPerSecond` × the window's seconds, so that a failing
 * dependency sees at most about `1 + retryRatio` times the calls offered, never 3× or 5×.
 *
 * @example
 * fg.loadRules({ retryBudgets: [{ resource: 'api.example.com', retryRatio: 0.1 }] });
 * const retry = fg.tryEntry('api.example.com', { attempt: 'retry' });
 * if (retry instanceof RetryBudgetExhaustedError) return lastResponse; // no retry: answer what the first attempt got
 */
export interface RetryBudgetRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * Retries (and hedges) allowed per first attempt in the window, within [0, 1000] (Finagle's
   * `percentCanRetry`): 0.2 lets one call in five be retried once.
   * @defaultValue 0.2
   */
  readonly retryRatio?: number;
  /**
   * How long a first attempt's deposit (and a retry's withdrawal) counts, in ms, within
   * [1000, 60000] (Finagle's `ttl`, and its bounds).
   * @defaultValue 10000
   */
  readonly ttlMs?: number;
  /**
   * Retries allowed per second whatever the traffic (Finagle's `minRetriesPerSec`), so that a
   * resource with few calls can still retry: a reserve of `minRetriesPerSecond × ttlMs / 1000`
   * retries in every window. At least 0.
   * @defaultValue 10
   */
  readonly minRetriesPerSecond?: number;
}

/** A retry budget rule in force: validated, with every default resolved. */
export interface RetryBudgetRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** Retries (and hedges) allowed per first attempt in the window. */
  readonly retryRatio: number;
  /** How long deposits and withdrawals count, in ms. */
  readonly ttlMs: number;
  /** Retries allowed per second whatever the traffic (the window's reserve). */
  readonly minRetriesPerSecond: number;
}

/** One retry budget's state, from `Floodgate.retryBudgets()`. */
export interface RetryBudgetStatus {
  /** The budget's rule, as it is in force. */
  readonly rule: RetryBudgetRule;
  /** Retries (and hedges) the budget allows now, whole: `floor(reserve + retryRatio × deposits − withdrawals)`. */
  readonly balance: number;
}

/** Defaults of a retry budget rule's optional fields: Finagle's `RetryBudget` defaults. */
export const RETRY_BUDGET_RULE_DEFAULTS = Object.freeze({
  /** One retry for every five first attempts (Finagle's `percentCanRetry` 0.2). */
  retryRatio: 0.2,
  /** Deposits count for ten seconds (Finagle's `ttl`). */
  ttlMs: 10_000,
  /** Ten retries a second whatever the traffic (Finagle's `minRetriesPerSec`). */
  minRetriesPerSecond: 10,
} as const);

/** The retry budget kind's name: its block errors' `kind`, its rule ids' prefix (`retryBudget#0`). */
export const RETRY_BUDGET_KIND_NAME = 'retryBudget' as const;

/**
 * A retry or hedge was refused: the resource's retry budget is spent (its dependency is failing
 * more than the budget lets callers retry). Code `ERR_RETRY_BUDGET_EXHAUSTED`; 503 over HTTP.
 * Callers answer with what the attempt before got (the outbound HTTP guard forwards the last
 * response or error), not with this error, unless they have nothing else.
 */
export class RetryBudgetExhaustedError extends BlockError<RetryBudgetRule> {
  /** Always `'ERR_RETRY_BUDGET_EXHAUSTED'`. */
  get code(): 'ERR_RETRY_BUDGET_EXHAUSTED' {
    return 'ERR_RETRY_BUDGET_EXHAUSTED';
  }
  /** Always the kind's name (`RETRY_BUDGET_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return RETRY_BUDGET_KIND_NAME;
  }
  /** Always `'capacity'`: the dependency is failing past what retries may add (503 over HTTP). */
  get refusal(): Refusal {
    return 'capacity';
  }
  /** `'A dependency is failing: its retry budget is spent, so the call was not retried.'` */
  get detail(): string {
    return 'A dependency is failing: its retry budget is spent, so the call was not retried.';
  }
  /** Always `'RetryBudgetExhaustedError'`. */
  get name(): string {
    return 'RetryBudgetExhaustedError';
  }
  /** E.g. `Retry budget of "api.example.com" is exhausted`. */
  get message(): string {
    return `Retry budget of "${this.resource}" is exhausted`;
  }
}

const FIELDS = ['resource', 'retryRatio', 'ttlMs', 'minRetriesPerSecond'] as const;

/**
 * Validates one retry budget rule and resolves its defaults. Problems go to `reader`; the
 * result is only meaningful when none were found. Checks: `retryRatio` within [0, 1000],
 * `ttlMs` within [1000, 60000] (Finagle's bounds), `minRetriesPerSecond` >= 0 and finite, no
 * unknown field.
 */
export function normalizeRetryBudgetRule(
  input: unknown,
  path: string,
  reader: RuleReader,
): RetryBudgetRule | undefined {
  const D = RETRY_BUDGET_RULE_DEFAULTS;
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  return {
    resource: reader.resource(obj, 'resource', path),
    retryRatio: reader.number(obj, 'retryRatio', path, { min: 0, max: 1000 }, D.retryRatio),
    ttlMs: reader.number(obj, 'ttlMs', path, { min: 1000, max: 60_000 }, D.ttlMs),
    minRetriesPerSecond: reader.number(obj, 'minRetriesPerSecond', path, { min: 0 }, D.minRetriesPerSecond),
  };
}
