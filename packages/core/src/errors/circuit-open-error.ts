import type { CircuitBreakerRule } from '../circuit-breaker/circuit-breaker-rule';
import { BlockError } from './block-error';

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
  get code(): 'ERR_CIRCUIT_OPEN' {
    return 'ERR_CIRCUIT_OPEN';
  }

  get name(): string {
    return 'CircuitOpenError';
  }

  get message(): string {
    return `Circuit breaker (${this.rule.strategy}) on "${this.resource}" is open`;
  }
}
