import type { CircuitBreakerRule } from '../circuit-breaker/circuit-breaker-rule';
import { BlockError, type BlockErrorOptions } from './block-error';

/**
 * A circuit breaker on the resource is open, or half-open with its probes taken. Code
 * `ERR_CIRCUIT_OPEN`; `retryAfterMs` is the time left until probing.
 */
export class CircuitOpenError extends BlockError<CircuitBreakerRule> {
  override readonly code = 'ERR_CIRCUIT_OPEN' as const;
  override readonly name = 'CircuitOpenError';

  constructor(options: BlockErrorOptions<CircuitBreakerRule>) {
    super(`Circuit breaker (${options.rule.strategy}) on "${options.resource}" is open`, options);
  }
}
