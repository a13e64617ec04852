import type { Entry } from '../kernel/entry';
import { BlockError, type Refusal } from '../kernel/errors';
import type {
  BreakerTransitionListener,
  ClusterBreakerBinding,
  ClusterKind,
  LocalBreaker,
} from '../cluster/cluster-contract';
import type { CheckResult, CompileContext, EventSink, RuleKind } from '../kernel/rule-kind';
import { BreakerStateMachine } from './breaker';
import {
  normalizeCircuitBreakerRule,
  type CircuitBreakerRule,
  type CircuitBreakerRuleOptions,
  type CircuitBreakerStatus,
  type CircuitStateChangeEvent,
} from './circuit-breaker-rule';
import { createBreakerStrategy } from './strategies';

/** The circuit breaker kind's name: its block errors' `kind`, its rule ids' prefix (`circuitBreaker#0`). */
export const CIRCUIT_BREAKER_KIND_NAME = 'circuitBreaker' as const;

/**
 * A circuit breaker on the resource is open, or half-open with its probes taken. Code
 * `ERR_CIRCUIT_OPEN`; `rule` is the breaker's rule. `retryAfterMs` is the time left until
 * probing while open; while half-open with every probe taken, the time until the oldest
 * running probe times out (by then the half-open period is decided).
 *
 * @example
 * const result = fg.tryEntry('getUser');
 * if (result instanceof CircuitOpenError) res.set('Retry-After', String(Math.ceil(result.retryAfterMs! / 1000)));
 */
export class CircuitOpenError extends BlockError<CircuitBreakerRule> {
  /** Always `'ERR_CIRCUIT_OPEN'`. */
  get code(): 'ERR_CIRCUIT_OPEN' {
    return 'ERR_CIRCUIT_OPEN';
  }
  /** Always the kind's name (`CIRCUIT_BREAKER_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return CIRCUIT_BREAKER_KIND_NAME;
  }
  /** Always `'capacity'`: the resource cannot take calls now (503 over HTTP). */
  get refusal(): Refusal {
    return 'capacity';
  }
  /** `'The resource is temporarily unavailable: its circuit breaker is open.'` */
  get detail(): string {
    return 'The resource is temporarily unavailable: its circuit breaker is open.';
  }
  /** Always `'CircuitOpenError'`. */
  get name(): string {
    return 'CircuitOpenError';
  }
  /** E.g. `Circuit breaker (errorRatio) on "getUser" is open`. */
  get message(): string {
    return `Circuit breaker (${this.rule.strategy}) on "${this.resource}" is open`;
  }
}

/**
 * One circuit breaker rule on one resource, as the engine runs it: checks calls against the
 * breaker's state, records every completion, reports its state, and emits
 * `circuitStateChange` on each transition. Kept across reloads while its rule is unchanged. For
 * a shared breaker (`cluster: true` with a cluster backend) it is the local breaker the cluster
 * wrapper drives, which announces the transitions instead ({@link CircuitBreakerChecker.divert}).
 */
export class CircuitBreakerChecker implements LocalBreaker {
  private readonly machine: BreakerStateMachine;
  private retired = false;
  /** `circuitBreaker#<n>`: the breaker's position among its resource's breakers, set at each compilation. */
  ruleId = 'circuitBreaker#0';
  private diverted: BreakerTransitionListener | undefined;

  constructor(
    readonly rule: CircuitBreakerRule,
    events: EventSink,
  ) {
    const resource = rule.resource;
    this.machine = new BreakerStateMachine(rule, createBreakerStrategy(rule), (from, to, value) => {
      if (this.retired) return;
      if (this.diverted !== undefined) return this.diverted(from, to, value);
      if (!events.has('circuitStateChange')) return;
      const event: CircuitStateChangeEvent = { resource, rule, ruleId: this.ruleId, from, to, value };
      events.emit('circuitStateChange', event);
    });
  }

  /** Sends its transitions to `listener` instead of announcing them (a shared breaker's wrapper announces). */
  divert(listener: BreakerTransitionListener): void {
    this.diverted = listener;
  }

  /**
   * Its rule is no longer in force: calls admitted under it still exit through it, but its
   * transitions are no longer announced.
   */
  retire(): void {
    this.retired = true;
  }

  /**
   * Closed: passes. Open: refuses with a {@link CircuitOpenError} whose `retryAfterMs` is the
   * time left until probing. Half-open: lets the call through as a probe while probes are
   * left, else refuses it, with `retryAfterMs` the time until the oldest running probe times
   * out (by then the half-open period is decided, one way or the other).
   */
  check(entry: Entry, now: number): CheckResult {
    if (this.machine.state === 'closed') return undefined;
    const decision = this.machine.tryPass(now);
    if (decision === undefined) return undefined;
    if (typeof decision === 'number') {
      return new CircuitOpenError({
        resource: entry.resource,
        rule: this.rule,
        retryAfterMs: decision,
        origin: entry.origin,
      });
    }
    entry.attach(decision);
    return undefined;
  }

  /** Records the completed call: error from `entry.traceError()`, slow from `rtMs`. */
  onExit(entry: Entry, now: number, rtMs: number): void {
    this.machine.onComplete(now, rtMs, entry.hasError);
  }

  /** The breaker's state at `now`. */
  status(now: number): CircuitBreakerStatus {
    return this.machine.status(now);
  }
}

/**
 * Compiles one resource's circuit breaker rules: one breaker per rule, in rule order. A rule
 * identical to one in force before keeps that breaker (its state, window and running probes);
 * a new or changed rule starts a fresh, closed breaker.
 */
function compileCircuitBreakerRules(rules: readonly CircuitBreakerRule[], ctx: CompileContext) {
  return {
    checkers: rules.map((rule, i) => {
      const checker = ctx.reuse(rule, () => new CircuitBreakerChecker(rule, ctx.events));
      checker.ruleId = `circuitBreaker#${i}`;
      return checker;
    }),
  };
}

/**
 * Breakers shared in the store (`cluster: true`): named by the resource, the strategy and the
 * window's shape (never the thresholds, so instances rolling out a new threshold share one
 * breaker), with the kind's own checker as the local breaker.
 */
const circuitBreakerCluster: ClusterBreakerBinding<CircuitBreakerRule> = {
  identity: (rule) => ['circuitBreaker', rule.resource, rule.strategy, `${rule.statIntervalMs}/${rule.bucketCount}`],
  breakerSpec: (rule, key) => ({
    key,
    strategy: rule.strategy,
    threshold: rule.threshold,
    ...(rule.maxAllowedRtMs !== undefined ? { maxAllowedRtMs: rule.maxAllowedRtMs } : {}),
    minRequestAmount: rule.minRequestAmount,
    statIntervalMs: rule.statIntervalMs,
    bucketCount: rule.bucketCount,
    retryTimeoutMs: rule.retryTimeoutMs,
    halfOpenProbes: rule.halfOpenProbes,
  }),
  local: (checker) => checker as CircuitBreakerChecker,
  refuse: (rule, entry, retryAfterMs) =>
    new CircuitOpenError({ resource: entry.resource, rule, retryAfterMs, origin: entry.origin }),
};

/** Circuit breaker rules: slow-call ratio, error ratio and error count, with half-open probing. */
export const circuitBreakerKind: RuleKind<'circuitBreakers', CircuitBreakerRule, CircuitBreakerRuleOptions> &
  ClusterKind<CircuitBreakerRule> = {
  key: 'circuitBreakers',
  name: CIRCUIT_BREAKER_KIND_NAME,
  routeOption: 'circuitBreaker',
  scope: 'resource',
  codes: { ERR_CIRCUIT_OPEN: 'A circuit breaker on the resource is open.' },
  normalize: normalizeCircuitBreakerRule,
  resourceOf: (rule) => rule.resource,
  compile: compileCircuitBreakerRules,
  cluster: circuitBreakerCluster,
};
