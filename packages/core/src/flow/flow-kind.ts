import { boundedKey } from '../kernel/bounded-key';
import type { ClusterBinding, ClusterKind, ClusterLimiterSpec } from '../cluster/cluster-contract';
import type { Entry } from '../kernel/entry';
import type { Checker, CheckResult, CompileContext, EntryAttachment, RuleKind } from '../kernel/rule-kind';
import type { StatisticNode } from '../kernel/statistic-node';
import { PRIORITY_FACTORS_DEFAULTS } from '../kernel/priority';
import { AdaptiveLimit } from './adaptive-limit';
import { BorrowingWindow } from './borrowing-window';
import { Bulkhead, BulkheadChecker } from './bulkhead';
import {
  FLOW_KIND_NAME,
  FLOW_RULE_DEFAULTS,
  FlowBlockError,
  normalizeFlowRule,
  type FlowRule,
  type FlowRuleOptions,
} from './flow-rule';
import { PartitionedLimit } from './partitioned-limit';
import {
  BLOCKED,
  DefaultController,
  PASS,
  ThrottlingController,
  WarmUpController,
  WarmUpThrottlingController,
  type TrafficController,
} from './traffic-controllers';

/** Which statistics a flow rule reads, from its `limitOrigin` (Sentinel's FlowRuleChecker). */
const enum Scope {
  /** `'default'`: every caller, counted together. */
  All,
  /** A named origin: that origin's own statistics. */
  Origin,
  /** `'other'`: each origin no other rule of the resource names, on its own. */
  Other,
}

/**
 * Checks one flow rule: picks the statistics to count (the resource's, one origin's, or
 * `refResource`'s for `relate`) and asks the rule's controller. A pacing slot taken is attached
 * to the entry, so a call that does not run gives it back.
 */
export class FlowRuleChecker implements Checker {
  private readonly scope: Scope;
  /** Throttling rules with a queue make `enter()` calls wait. */
  readonly mayWait: boolean;

  constructor(
    readonly rule: FlowRule,
    private readonly controller: TrafficController,
    private readonly lookupNode: (resource: string) => StatisticNode | undefined,
    /** The origins named by the resource's flow rules (for `'other'`). */
    private readonly namedOrigins: ReadonlySet<string>,
  ) {
    this.mayWait = controller.refund !== undefined && (rule.maxQueueingTimeMs! > 0 || (rule.occupyTimeoutMs ?? 0) > 0);
    this.scope = rule.limitOrigin === 'default' ? Scope.All : rule.limitOrigin === 'other' ? Scope.Other : Scope.Origin;
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    if (this.scopeOf(entry) === undefined) return undefined;
    const node =
      this.rule.strategy === 'relate'
        ? this.lookupNode(this.rule.refResource!)
        : this.scope === Scope.All
          ? entry.node
          : entry.originNode;
    if (node === undefined) return undefined;
    const result = this.controller.tryPass(node, entry.acquireCount, now, canWait, entry.priority);
    if (result === BLOCKED) {
      return new FlowBlockError({
        resource: entry.resource,
        rule: this.rule,
        retryAfterMs: this.controller.retryAfterMs(node, entry.acquireCount, now, canWait),
        origin: entry.origin,
      });
    }
    if (this.controller.refund !== undefined && entry.acquireCount > 0)
      entry.attach(new SlotRefund(this.controller, now + result, now));
    const completions = this.controller.completions;
    if (completions !== undefined) entry.attach(completions);
    return result === PASS ? undefined : result;
  }

  /**
   * The count within the rule this entry takes from: `''` for the rule's one count, the origin
   * for `'other'` rules (each origin counted on its own, a long one under its digest); `undefined`
   * when the rule does not apply to the entry's origin.
   */
  scopeOf(entry: Entry): string | undefined {
    switch (this.scope) {
      case Scope.All:
        return '';
      case Scope.Origin:
        return entry.origin === this.rule.limitOrigin ? '' : undefined;
      case Scope.Other:
        return entry.origin === '' || this.namedOrigins.has(entry.origin) ? undefined : boundedKey(entry.origin);
    }
  }
}

/** A pacing slot a call took, given back if the call does not run. */
class SlotRefund implements EntryAttachment {
  constructor(
    private readonly controller: TrafficController,
    private readonly slotAt: number,
    private readonly takenAt: number,
  ) {}

  exited(): void {
    // The call ran in its slot.
  }

  released(entry: Entry): void {
    this.controller.refund!(this.slotAt, this.takenAt, entry.acquireCount);
  }
}

/** The controller that enforces `rule`'s metric and behaviour. */
export function createTrafficController(rule: FlowRule): TrafficController {
  if (rule.behavior === 'adaptive')
    return new AdaptiveLimit(
      rule.threshold,
      rule.minLimit!,
      rule.maxLimit!,
      rule.priorityFactors ?? PRIORITY_FACTORS_DEFAULTS,
    );
  if (rule.metric === 'concurrency')
    return rule.partitions === undefined
      ? new DefaultController(rule.threshold, true)
      : new PartitionedLimit(rule.threshold, rule.partitions);
  const coldFactor = rule.coldFactor ?? FLOW_RULE_DEFAULTS.coldFactor;
  const maxQueueingTimeMs = rule.maxQueueingTimeMs ?? FLOW_RULE_DEFAULTS.maxQueueingTimeMs;
  switch (rule.behavior) {
    case 'reject':
      return rule.prioritized
        ? new BorrowingWindow(rule.threshold, rule.occupyTimeoutMs!)
        : new DefaultController(rule.threshold, false);
    case 'warmUp':
      return new WarmUpController(rule.threshold, rule.warmUpPeriodMs!, coldFactor);
    case 'throttle':
      return new ThrottlingController(rule.threshold, maxQueueingTimeMs);
    case 'warmUpThrottle':
      return new WarmUpThrottlingController(rule.threshold, rule.warmUpPeriodMs!, coldFactor, maxQueueingTimeMs);
  }
}

/** The origins that one resource's flow rules name (neither `'default'` nor `'other'`). */
function namedOrigins(rules: readonly FlowRule[]): Set<string> {
  const names = new Set<string>();
  for (const rule of rules)
    if (rule.limitOrigin !== 'default' && rule.limitOrigin !== 'other') names.add(rule.limitOrigin);
  return names;
}

/**
 * Compiles one resource's flow rules into checkers, keeping the state (tokens, pacing) of
 * unchanged rules.
 */
function compileFlowRules(rules: readonly FlowRule[], ctx: CompileContext) {
  const named = namedOrigins(rules);
  const checkers = rules.map((rule): Checker => {
    if (rule.maxQueueLength !== undefined) {
      // One queue per origin the rule limits, kept across reloads that change its bounds.
      const bulkhead = ctx.reuse({ bulkhead: rule.limitOrigin }, () => new Bulkhead(ctx.clock));
      bulkhead.configure(rule);
      return new BulkheadChecker(rule, bulkhead);
    }
    const controller = ctx.reuse(rule, () => createTrafficController(rule));
    return new FlowRuleChecker(rule, controller, (resource) => ctx.lookupNode(resource), named);
  });
  const other = rules.some((rule) => rule.limitOrigin === 'other');
  return { checkers, ...(named.size > 0 || other ? { origins: { named, other } } : {}) };
}

/** The pacing window of flow rules: `threshold` calls per second. */
const FLOW_DURATION_MS = 1000;

/** Flow rules in the store: `reject` is a shared sliding window, `throttle` shared pacing. */
const flowCluster: ClusterBinding<FlowRule> = {
  leases: true,
  localWindowMs: () => FLOW_DURATION_MS,
  identity: (rule) => ['flow', rule.resource, rule.behavior, rule.limitOrigin],
  spec(rule, key): ClusterLimiterSpec {
    const cluster = rule.cluster!;
    return rule.behavior === 'throttle'
      ? {
          kind: 'pace',
          key,
          threshold: rule.threshold,
          thresholdType: cluster.thresholdType,
          maxQueueingTimeMs: rule.maxQueueingTimeMs!,
          durationMs: FLOW_DURATION_MS,
        }
      : {
          kind: 'window',
          key,
          threshold: rule.threshold,
          thresholdType: cluster.thresholdType,
          leaseTokens: cluster.leaseTokens,
        };
  },
  request(_rule, local, entry) {
    const scope = (local as FlowRuleChecker).scopeOf(entry);
    return scope === undefined ? undefined : { scopes: [scope], each: false };
  },
  refuse: (rule, entry, _request, decision) =>
    new FlowBlockError({ resource: entry.resource, rule, retryAfterMs: decision.retryAfterMs, origin: entry.origin }),
};

/**
 * Flow rules: QPS and concurrency limits with Sentinel's traffic shaping (reject, warm-up,
 * throttling, warm-up throttling), per origin or by a related resource; adaptive concurrency.
 */
export const flowKind: RuleKind<'flow', FlowRule, FlowRuleOptions> & ClusterKind<FlowRule> = {
  key: 'flow',
  name: FLOW_KIND_NAME,
  routeOption: 'rateLimit',
  scope: 'resource',
  codes: { ERR_FLOW_BLOCKED: 'A flow rule (QPS or concurrency limit) blocked the call.' },
  normalize: normalizeFlowRule,
  resourceOf: (rule) => rule.resource,
  compile: compileFlowRules,
  referenceOf: (rule) => rule.refResource,
  cluster: flowCluster,
};
