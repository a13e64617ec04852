import type { Checker, CheckResult } from '../engine/checker';
import type { Entry } from '../engine/entry';
import { FlowBlockError } from '../errors/flow-block-error';
import type { StatisticNode } from '../stat/statistic-node';
import type { FlowRule } from './flow-rule';
import { PASS, type TrafficController } from './traffic-controller';

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
 * `refResource`'s for `relate`) and asks the rule's controller.
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
    this.mayWait = (rule.behavior === 'throttle' || rule.behavior === 'warmUpThrottle') && rule.maxQueueingTimeMs! > 0;
    this.scope = rule.limitOrigin === 'default' ? Scope.All : rule.limitOrigin === 'other' ? Scope.Other : Scope.Origin;
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    const node = this.selectNode(entry);
    if (node === undefined) return undefined;
    const result = this.controller.tryPass(node, entry.acquireCount, now, canWait);
    if (result === PASS) return undefined;
    if (result > 0) return result;
    return new FlowBlockError({
      resource: entry.resource,
      rule: this.rule,
      retryAfterMs: this.controller.retryAfterMs(node, entry.acquireCount, now, canWait),
      origin: entry.origin,
    });
  }

  refund(_entry: Entry, slotAt: number): void {
    this.controller.refund?.(slotAt);
  }

  private selectNode(entry: Entry): StatisticNode | undefined {
    switch (this.scope) {
      case Scope.All:
        break;
      case Scope.Origin:
        if (entry.origin !== this.rule.limitOrigin) return undefined;
        break;
      case Scope.Other:
        if (entry.origin === '' || this.namedOrigins.has(entry.origin)) return undefined;
        break;
    }
    if (this.rule.strategy === 'relate') return this.lookupNode(this.rule.refResource!);
    return this.scope === Scope.All ? entry.node : entry.originNode;
  }
}
