import { apiGroupKind, type ApiGroup, type ApiGroupOptions } from '../api-group/api-group';
import { adaptiveThrottlingKind } from '../adaptive-throttling/adaptive-throttling-kind';
import type {
  AdaptiveThrottlingRule,
  AdaptiveThrottlingRuleOptions,
} from '../adaptive-throttling/adaptive-throttling-rule';
import { authorityKind, type AuthorityRule, type AuthorityRuleOptions } from '../authority/authority';
import { circuitBreakerKind } from '../circuit-breaker/circuit-breaker-kind';
import type { CircuitBreakerRule, CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import { flowKind } from '../flow/flow-kind';
import type { FlowRule, FlowRuleOptions } from '../flow/flow-rule';
import { hotParamKind } from '../hot-param/hot-param-kind';
import type { HotParamRule, HotParamRuleOptions } from '../hot-param/hot-param-rule';
import { KERNEL_ERROR_CODES } from '../kernel/errors';
import type { RuleKind } from '../kernel/rule-kind';
import { pushbackKind, type PushbackRule, type PushbackRuleOptions } from '../pushback/pushback';
import { retryBudgetKind } from '../retry-budget/retry-budget-kind';
import type { RetryBudgetRule, RetryBudgetRuleOptions } from '../retry-budget/retry-budget-rule';
import { systemKind } from '../system/system-kind';
import type { RolloutOptions, RuleRollout } from './rollout';
import type { SystemRule, SystemRuleOptions } from '../system/system-rule';

/**
 * Every rule kind, in the order their checks run: authority → system → hotspot → flow →
 * circuit breaker, as Sentinel's slot chain, with the outbound kinds in their places, then API
 * groups, which check nothing (the HTTP layer reads them). Pushback comes early (a pause refuses
 * everything, cheaply, and takes nothing); adaptive throttling and the retry budget come after
 * flow, so that a call a bulkhead refuses neither counts as a request nor spends a retry, and
 * before the circuit breaker, so that a call they refuse never takes a half-open breaker's probe.
 * Adding a kind is a folder of its own and one line here: rule sets, loading, validation,
 * compilation and `ErrorCodes` follow from this list.
 */
export const RULE_KINDS = [
  authorityKind,
  systemKind,
  pushbackKind,
  hotParamKind,
  flowKind,
  adaptiveThrottlingKind,
  retryBudgetKind,
  circuitBreakerKind,
  apiGroupKind,
] as const;

/**
 * Rules as users write them, by kind. Each kind given replaces that kind's rules on load; the
 * others stay. Every rule takes the rollout fields (`mode`, `enforcePercent`) besides its kind's.
 */
export interface RuleSetOptions {
  /** Which origins may call a resource (checked first). */
  readonly authority?: readonly (AuthorityRuleOptions & RolloutOptions)[];
  /** Limits on the whole process, for inbound calls whatever their resource. */
  readonly system?: readonly (SystemRuleOptions & RolloutOptions)[];
  /** Pauses a resource whose dependency asked for one (`Retry-After`). */
  readonly pushback?: readonly (PushbackRuleOptions & RolloutOptions)[];
  /** Limits per value of a parameter (a user id, an IP, a SKU). */
  readonly hotParams?: readonly (HotParamRuleOptions & RolloutOptions)[];
  /** QPS and concurrency limits per resource. */
  readonly flow?: readonly (FlowRuleOptions & RolloutOptions)[];
  /** Client-side adaptive throttling (Google SRE): calls shed while the dependency rejects. */
  readonly adaptiveThrottling?: readonly (AdaptiveThrottlingRuleOptions & RolloutOptions)[];
  /** Retries and hedges capped at a share of first attempts (Finagle). */
  readonly retryBudgets?: readonly (RetryBudgetRuleOptions & RolloutOptions)[];
  /** Circuit breakers per resource (checked last). */
  readonly circuitBreakers?: readonly (CircuitBreakerRuleOptions & RolloutOptions)[];
  /** API groups: named groups of request patterns, each one resource the HTTP adapters enter (they check nothing themselves). */
  readonly apiGroups?: readonly ApiGroupOptions[];
}

/**
 * Rules in force, by kind, in check order: validated, with every default resolved (the rollout
 * fields are present only where they differ from theirs: see `RuleRollout`).
 */
export interface RuleSet {
  /** Authority rules in force. */
  readonly authority: readonly (AuthorityRule & RuleRollout)[];
  /** System rules in force. */
  readonly system: readonly (SystemRule & RuleRollout)[];
  /** Pushback rules in force. */
  readonly pushback: readonly (PushbackRule & RuleRollout)[];
  /** Hotspot rules in force. */
  readonly hotParams: readonly (HotParamRule & RuleRollout)[];
  /** Flow rules in force. */
  readonly flow: readonly (FlowRule & RuleRollout)[];
  /** Adaptive throttling rules in force. */
  readonly adaptiveThrottling: readonly (AdaptiveThrottlingRule & RuleRollout)[];
  /** Retry budget rules in force. */
  readonly retryBudgets: readonly (RetryBudgetRule & RuleRollout)[];
  /** Circuit breaker rules in force. */
  readonly circuitBreakers: readonly (CircuitBreakerRule & RuleRollout)[];
  /** API groups in force. */
  readonly apiGroups: readonly ApiGroup[];
}

/** A kind of rule: a key of a `RuleSet` (`'flow'`, `'circuitBreakers'`, ...). */
export type RuleKindKey = keyof RuleSet;

/** A rule of any kind, in force. */
export type AnyRule = RuleSet[RuleKindKey][number];

type Kind = (typeof RULE_KINDS)[number];
type RuleOf<T> = T extends RuleKind<string, infer R, unknown> ? R : never;
type OptionsOf<T> = T extends RuleKind<string, object, infer O> ? O : never;
/** Every kind's rules take the rollout fields, but API groups, which check nothing. */
type WithRollout<T, R, F> = T extends { key: 'apiGroups' } ? R : R & F;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// A kind added to RULE_KINDS without its field in RuleSet and RuleSetOptions (or the other way
// round, or with other types) fails to compile here.
[true, true] satisfies [
  Same<RuleSet, { readonly [T in Kind as T['key']]: readonly WithRollout<T, RuleOf<T>, RuleRollout>[] }>,
  Same<RuleSetOptions, { readonly [T in Kind as T['key']]?: readonly WithRollout<T, OptionsOf<T>, RolloutOptions>[] }>,
];

// What the rest of the engine names of single kinds (the facade's shorthand loaders and
// statuses, the breaker's event, the probe behind the engine's `probe` option), so that only
// this module imports the kinds' folders.
export type {
  AuthorityRuleOptions,
  CircuitBreakerRuleOptions,
  FlowRuleOptions,
  HotParamRuleOptions,
  SystemRuleOptions,
};
export type { CircuitBreakerStatus } from '../circuit-breaker/circuit-breaker-rule';
export type { RetryBudgetStatus } from '../retry-budget/retry-budget-rule';
export type { CircuitStateChangeEvent } from '../circuit-breaker/circuit-breaker-rule';
export { processProbe, type SystemProbe } from '../system/system-probe';

/** The kinds by key. */
export const KINDS_BY_KEY: ReadonlyMap<string, RuleKind> = new Map(
  RULE_KINDS.map((kind) => [kind.key, kind as unknown as RuleKind]),
);

/**
 * How one rule kind is named, from {@link RULE_KIND_NAMES}: each name is the kind's own, so that
 * what shows kinds (a dashboard, metric labels, route options) reads them here and a new kind
 * shows by its names everywhere.
 */
export interface RuleKindNames {
  /** Its key in rule sets (`'hotParams'`): `loadRules()`, `getRules()`, `describeRules()`. */
  readonly key: RuleKindKey;
  /** Its name in the singular (`'hotParam'`): its block errors' `kind`, its rule ids (`hotParam#0`). */
  readonly name: string;
  /**
   * The option under which HTTP routes and gRPC methods take one of its rules (`'rateLimit'` for
   * flow rules, `'circuitBreaker'`, `'hotParam'`); absent for kinds they do not take per route.
   */
  readonly routeOption?: string;
  /** The codes of its block errors (`'ERR_HOT_PARAM_BLOCKED'`). */
  readonly codes: readonly string[];
}

/** Every rule kind's names, in check order. */
export const RULE_KIND_NAMES: readonly RuleKindNames[] = Object.freeze(
  (RULE_KINDS as readonly RuleKind[]).map((kind) =>
    Object.freeze({
      key: kind.key as RuleKindKey,
      name: kind.name,
      ...(kind.routeOption === undefined ? {} : { routeOption: kind.routeOption }),
      codes: Object.freeze(Object.keys(kind.codes)),
    }),
  ),
);

const KIND_BY_CODE: ReadonlyMap<string, RuleKind> = new Map(
  RULE_KINDS.flatMap((kind) => Object.keys(kind.codes).map((code) => [code, kind as unknown as RuleKind] as const)),
);

/** The kind whose block errors have `code`; `undefined` for a code no kind throws. */
export function kindOfCode(code: string): RuleKind | undefined {
  return KIND_BY_CODE.get(code);
}

/**
 * Every error code Floodgate throws, with what it means: the kernel's and each rule kind's.
 * Codes are stable: a retired code is never reused.
 */
export const ErrorCodes: Readonly<Record<string, string>> = Object.freeze(
  Object.assign({}, KERNEL_ERROR_CODES, ...RULE_KINDS.map((kind) => kind.codes)) as Record<string, string>,
);
