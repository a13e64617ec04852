import type { Entry, EntryAttachment } from '../kernel/entry';
import { LeapArray } from '../kernel/leap-array';
import type { Checker, CheckResult, CompileContext, RuleKind } from '../kernel/rule-kind';
import {
  RETRY_BUDGET_KIND_NAME,
  RetryBudgetExhaustedError,
  normalizeRetryBudgetRule,
  type RetryBudgetRule,
  type RetryBudgetRuleOptions,
  type RetryBudgetStatus,
} from './retry-budget-rule';

const DEPOSITS = 0;
const WITHDRAWALS = 1;
/** Buckets of the window, as Finagle's `WindowedAdder` slices its ttl. */
const BUCKETS = 10;
/** Float slack when comparing the balance with one retry (0.29 × 100 first attempts is 28.999…). */
const EPSILON = 1e-9;

/**
 * One retry budget: first attempts deposit, retries and hedges withdraw, both for `ttlMs` (a
 * sliding window of ten buckets that rotate lazily against the clock, no timer). A withdrawal
 * succeeds while `reserve + retryRatio × deposits − withdrawals >= 1` over the window, where the
 * reserve is `minRetriesPerSecond × ttlMs / 1000`: Finagle's `TokenRetryBudget` over its
 * leaky token bucket, counted in calls instead of scaled integer tokens.
 */
export class RetryBudget {
  private readonly window: LeapArray;
  private readonly sums = new Float64Array(2);
  private readonly reserve: number;

  constructor(private readonly rule: RetryBudgetRule) {
    this.window = new LeapArray(BUCKETS, rule.ttlMs, 2);
    this.reserve = (rule.minRetriesPerSecond * rule.ttlMs) / 1000;
  }

  /** Retries (and hedges) the budget allows at `now`, whole. */
  balance(now: number): number {
    this.window.sumAll(now, this.sums);
    const left = this.reserve + this.rule.retryRatio * this.sums[DEPOSITS]! - this.sums[WITHDRAWALS]!;
    return Math.max(0, Math.floor(left + EPSILON));
  }

  /** A first attempt at `now` earns its share of a retry. */
  deposit(now: number): void {
    this.window.add(now, DEPOSITS, 1);
  }

  /** A retry at `now`, if the budget allows one: `false` when it is spent. */
  tryWithdraw(now: number): boolean {
    if (this.balance(now) < 1) return false;
    this.window.add(now, WITHDRAWALS, 1);
    return true;
  }

  /** Takes back a deposit (`field` 0) or a withdrawal (1) made at `at`: the call did not run. */
  undo(field: number, at: number): void {
    this.window.subtract(at, field, 1);
  }
}

/** What a call put in or took from the budget, taken back if the call does not run. */
class BudgetMove implements EntryAttachment {
  constructor(
    private readonly budget: RetryBudget,
    private readonly field: number,
    private readonly at: number,
  ) {}

  exited(): void {
    // The call ran: its deposit or withdrawal stands.
  }

  released(): void {
    this.budget.undo(this.field, this.at);
  }
}

/**
 * Checks one retry budget rule: a first attempt deposits and passes; a retry or hedge passes
 * while the budget allows one, else is refused with a {@link RetryBudgetExhaustedError}. What the
 * call moved is given back when a later check refuses it, so a refused call spends no budget.
 */
export class RetryBudgetChecker implements Checker {
  constructor(
    readonly rule: RetryBudgetRule,
    readonly budget: RetryBudget,
  ) {}

  check(entry: Entry, now: number): CheckResult {
    if (entry.attempt === 'first') {
      this.budget.deposit(now);
      entry.attach(new BudgetMove(this.budget, DEPOSITS, now));
      return undefined;
    }
    if (!this.budget.tryWithdraw(now))
      return new RetryBudgetExhaustedError({ resource: entry.resource, rule: this.rule, origin: entry.origin });
    entry.attach(new BudgetMove(this.budget, WITHDRAWALS, now));
    return undefined;
  }

  /** The budget's rule and the retries (and hedges) it allows at `now`. */
  status(now: number): RetryBudgetStatus {
    return { rule: this.rule, balance: this.budget.balance(now) };
  }
}

/** One budget per rule, kept across reloads of an unchanged rule. */
function compileRetryBudgetRules(rules: readonly RetryBudgetRule[], ctx: CompileContext) {
  return {
    checkers: rules.map(
      (rule) =>
        new RetryBudgetChecker(
          rule,
          ctx.reuse(rule, () => new RetryBudget(rule)),
        ),
    ),
  };
}

/**
 * Retry budgets: retries and hedges of a resource capped at a share of its first attempts
 * (Finagle's `RetryBudget`), so retrying never multiplies the load on a failing dependency.
 */
export const retryBudgetKind: RuleKind<'retryBudgets', RetryBudgetRule, RetryBudgetRuleOptions> = {
  key: 'retryBudgets',
  name: RETRY_BUDGET_KIND_NAME,
  scope: 'resource',
  codes: { ERR_RETRY_BUDGET_EXHAUSTED: "A retry or hedge was refused: the resource's retry budget is spent." },
  normalize: normalizeRetryBudgetRule,
  resourceOf: (rule) => rule.resource,
  compile: compileRetryBudgetRules,
};
