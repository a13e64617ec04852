import type { Entry, EntryAttachment } from '../kernel/entry';
import { LeapArray } from '../kernel/leap-array';
import type { Checker, CheckResult, CompileContext, RuleKind } from '../kernel/rule-kind';
import {
  ADAPTIVE_THROTTLING_KIND_NAME,
  AdaptiveThrottlingError,
  normalizeAdaptiveThrottlingRule,
  type AdaptiveThrottlingRule,
  type AdaptiveThrottlingRuleOptions,
} from './adaptive-throttling-rule';

const REQUESTS = 0;
const ACCEPTS = 1;
/** Buckets of the trailing window (12 s each for the default two minutes). */
const BUCKETS = 10;

/**
 * One rule's requests and accepts over its trailing window: a ring of ten buckets that rotate
 * lazily against the clock (no timer).
 */
export class ThrottleWindow {
  private readonly buckets: LeapArray;
  private readonly sums = new Float64Array(2);

  constructor(windowMs: number) {
    this.buckets = new LeapArray(BUCKETS, windowMs, 2);
  }

  /** The SRE book's rejection probability at `now`: `max(0, (requests − k × accepts) / (requests + 1))`. */
  rejectionProbability(now: number, k: number): number {
    this.buckets.sumAll(now, this.sums);
    const requests = this.sums[REQUESTS]!;
    return Math.max(0, (requests - k * this.sums[ACCEPTS]!) / (requests + 1));
  }

  /** Counts one request at `now`. */
  request(now: number): void {
    this.buckets.add(now, REQUESTS, 1);
  }

  /** Takes back the request counted at `at`: the call did not run. */
  unrequest(at: number): void {
    this.buckets.subtract(at, REQUESTS, 1);
  }

  /** Counts one accepted call at `now`. */
  accept(now: number): void {
    this.buckets.add(now, ACCEPTS, 1);
  }
}

/** The request a passing call counted, taken back if a later check refuses the call. */
class CountedRequest implements EntryAttachment {
  constructor(
    private readonly window: ThrottleWindow,
    private readonly at: number,
  ) {}

  exited(): void {
    // The call was sent: its request stands.
  }

  released(): void {
    this.window.unrequest(this.at);
  }
}

/**
 * Checks one adaptive throttling rule: every call that reaches it is a request; it is refused
 * with the rejection probability, drawn from the engine's random source (a refused call stays
 * counted, as in the book, so refusals grow while the dependency keeps rejecting). A call that
 * passes and is then refused by a later check is taken back. A call that completes without a
 * traced error or a pushback is an accept.
 */
export class AdaptiveThrottlingChecker implements Checker {
  constructor(
    readonly rule: AdaptiveThrottlingRule,
    private readonly window: ThrottleWindow,
    private readonly random: () => number,
  ) {}

  check(entry: Entry, now: number): CheckResult {
    const probability = this.window.rejectionProbability(now, this.rule.k);
    this.window.request(now);
    if (probability > 0 && this.random() < probability)
      return new AdaptiveThrottlingError({ resource: entry.resource, rule: this.rule, origin: entry.origin });
    entry.attach(new CountedRequest(this.window, now));
    return undefined;
  }

  onExit(entry: Entry, now: number): void {
    if (!entry.hasError && entry.pushbackMs === undefined) this.window.accept(now);
  }
}

/** One window per rule, kept across reloads of an unchanged rule. */
function compileAdaptiveThrottlingRules(rules: readonly AdaptiveThrottlingRule[], ctx: CompileContext) {
  return {
    checkers: rules.map(
      (rule) =>
        new AdaptiveThrottlingChecker(
          rule,
          ctx.reuse(rule, () => new ThrottleWindow(rule.windowMs)),
          ctx.random,
        ),
    ),
  };
}

/**
 * Client-side adaptive throttling (Google SRE book, "Handling Overload"): calls to a dependency
 * that keeps rejecting are shed locally, in proportion to how much it rejects.
 */
export const adaptiveThrottlingKind: RuleKind<
  'adaptiveThrottling',
  AdaptiveThrottlingRule,
  AdaptiveThrottlingRuleOptions
> = {
  key: 'adaptiveThrottling',
  name: ADAPTIVE_THROTTLING_KIND_NAME,
  scope: 'resource',
  codes: { ERR_ADAPTIVE_THROTTLED: 'Client-side adaptive throttling shed the call: its dependency keeps rejecting.' },
  normalize: normalizeAdaptiveThrottlingRule,
  resourceOf: (rule) => rule.resource,
  compile: compileAdaptiveThrottlingRules,
};
