import type { Checker, CheckResult, ExitHook } from '../engine/checker';
import type { Entry } from '../engine/entry';
import type { EventHub } from '../engine/events';
import type { BreakerView } from '../engine/resource-rules';
import type { Retirable } from '../engine/rule-compiler';
import { CircuitOpenError } from '../errors/circuit-open-error';
import { BreakerStateMachine } from './breaker-state-machine';
import type { CircuitBreakerRule, CircuitBreakerStatus } from './circuit-breaker-rule';
import { createBreakerStrategy } from './create-breaker-strategy';

/**
 * One circuit breaker rule on one resource, as the engine runs it: checks calls against the
 * breaker's state, records every completion, reports its state, and emits
 * `circuitStateChange` on each transition. Kept across reloads while its rule is unchanged.
 */
export class CircuitBreakerChecker implements Checker, ExitHook, BreakerView, Retirable {
  private readonly machine: BreakerStateMachine;
  private retired = false;

  constructor(readonly rule: CircuitBreakerRule, events: EventHub) {
    const resource = rule.resource;
    this.machine = new BreakerStateMachine(rule, createBreakerStrategy(rule), (from, to, value) => {
      if (!this.retired) events.emit('circuitStateChange', { resource, rule, from, to, value });
    });
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
      return new CircuitOpenError({ resource: entry.resource, rule: this.rule, retryAfterMs: decision, origin: entry.origin });
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
