import type { EventHub } from '../engine/events';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { ClusterDecision, ClusterUnavailable } from './cluster-backend';

/** Emits a cluster rule's `clusterFallback` and `clusterRecover` events on its engine. */
export class ClusterReporter {
  constructor(
    private readonly events: EventHub,
    private readonly backend: string,
    private readonly rule: FlowRule | HotParamRule,
  ) {}

  /** A call decided without the store: by the local rule, or let through. */
  fellBack(resource: string, decision: ClusterUnavailable, decidedBy: 'local' | 'pass'): void {
    if (!this.events.has('clusterFallback')) return;
    this.events.emit('clusterFallback', {
      resource,
      rule: this.rule,
      backend: this.backend,
      reason: decision.reason,
      ...(decision.error !== undefined ? { error: decision.error } : {}),
      decidedBy,
    });
  }

  /** The store answered; if that ends an outage, says so. */
  answered(decision: Exclude<ClusterDecision, ClusterUnavailable>): void {
    if (decision.recoveredAfterMs === undefined) return;
    this.events.emit('clusterRecover', { backend: this.backend, downForMs: decision.recoveredAfterMs });
  }
}
