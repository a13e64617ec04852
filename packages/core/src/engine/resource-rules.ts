import type { CircuitBreakerStatus } from '../circuit-breaker/circuit-breaker-rule';
import type { Checker, ExitHook } from './checker';

/** A circuit breaker as the engine sees it: something whose state can be reported. */
export interface BreakerView {
  /** The breaker's state at `now`. */
  status(now: number): CircuitBreakerStatus;
}

/** The compiled rules of one resource: what the hot path runs, in check order. */
export class ResourceRules {
  /** No rules. */
  static readonly EMPTY = new ResourceRules([], [], undefined, []);

  /** Whether a check may make `enter()` wait or ask a shared store (see {@link Checker.mayWait}). */
  readonly mayWait: boolean;

  constructor(
    /** authority → system → hotspot → flow → circuit breaker. */
    readonly checkers: readonly Checker[],
    /** Run on every exit of a passed entry. */
    readonly exitHooks: readonly ExitHook[],
    /**
     * Origins named by this resource's flow rules, when any rule limits by origin (then
     * per-origin statistics are kept); `undefined` otherwise.
     */
    readonly originNames: ReadonlySet<string> | undefined,
    /** The resource's circuit breakers, for `circuitState()`. */
    readonly breakers: readonly BreakerView[],
  ) {
    this.mayWait = checkers.some((checker) => checker.mayWait === true || checker.checkAsync !== undefined);
  }
}
