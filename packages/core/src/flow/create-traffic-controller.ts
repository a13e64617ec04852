import { DefaultController } from './default-controller';
import type { FlowRule } from './flow-rule';
import { FLOW_RULE_DEFAULTS } from './flow-rule-defaults';
import { ThrottlingController } from './throttling-controller';
import type { TrafficController } from './traffic-controller';
import { WarmUpController } from './warm-up-controller';
import { WarmUpThrottlingController } from './warm-up-throttling-controller';

/** The controller that enforces `rule`'s metric and behaviour. */
export function createTrafficController(rule: FlowRule): TrafficController {
  if (rule.metric === 'concurrency') return new DefaultController(rule.threshold, true);
  const coldFactor = rule.coldFactor ?? FLOW_RULE_DEFAULTS.coldFactor;
  const maxQueueingTimeMs = rule.maxQueueingTimeMs ?? FLOW_RULE_DEFAULTS.maxQueueingTimeMs;
  switch (rule.behavior) {
    case 'reject':
      return new DefaultController(rule.threshold, false);
    case 'warmUp':
      return new WarmUpController(rule.threshold, rule.warmUpPeriodMs!, coldFactor);
    case 'throttle':
      return new ThrottlingController(rule.threshold, maxQueueingTimeMs);
    case 'warmUpThrottle':
      return new WarmUpThrottlingController(rule.threshold, rule.warmUpPeriodMs!, coldFactor, maxQueueingTimeMs);
  }
}
