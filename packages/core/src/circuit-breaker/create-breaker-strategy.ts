import type { BreakerStrategy } from './breaker-strategy';
import type { CircuitBreakerRule } from './circuit-breaker-rule';
import { ErrorCountBreaker } from './error-count';
import { ErrorRatioBreaker } from './error-ratio';
import { SlowRequestRatioBreaker } from './slow-request-ratio';

/** The strategy that decides when `rule`'s breaker trips. */
export function createBreakerStrategy(rule: CircuitBreakerRule): BreakerStrategy {
  switch (rule.strategy) {
    case 'slowRequestRatio':
      return new SlowRequestRatioBreaker(rule.threshold);
    case 'errorRatio':
      return new ErrorRatioBreaker(rule.threshold);
    case 'errorCount':
      return new ErrorCountBreaker(rule.threshold);
  }
}
