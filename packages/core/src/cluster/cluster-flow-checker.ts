import type { Checker, CheckResult } from '../engine/checker';
import type { Entry } from '../engine/entry';
import type { EventHub } from '../engine/events';
import { FlowBlockError } from '../errors/flow-block-error';
import type { FlowRule } from '../flow/flow-rule';
import type { ClusterLimiter, ClusterUnavailable } from './cluster-backend';
import type { ClusterRuleConfig } from './cluster-rule-options';
import { ClusterReporter } from './cluster-reporter';

/**
 * Checks one cluster flow rule: `enter()`/`run()` ask the shared store (through the rule's
 * {@link ClusterLimiter}) and fall back to the local rule, or pass, when the store cannot
 * answer in time. A sync `entry()` cannot wait for the store: it decides from tokens already
 * leased to this instance when the rule leases, else by the local rule.
 */
export class ClusterFlowChecker implements Checker {
  private readonly cluster: ClusterRuleConfig;
  private readonly reporter: ClusterReporter;
  /** Entries whose wait was reserved by the local rule (so an abort refunds it there). */
  private readonly localWaits = new WeakSet<Entry>();

  constructor(
    readonly rule: FlowRule,
    /** The same rule decided in process: the fallback, and the sync path without a lease. */
    private readonly local: Checker,
    private readonly limiter: ClusterLimiter,
    backendName: string,
    events: EventHub,
    /** The origins named by the resource's flow rules (for `'other'`). */
    private readonly namedOrigins: ReadonlySet<string>,
  ) {
    this.cluster = rule.cluster!;
    this.reporter = new ClusterReporter(events, backendName, rule);
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    const scope = this.scopeOf(entry);
    if (scope === undefined) return undefined;
    const leased = this.limiter.tryAcquireLeased(entry.acquireCount, scope);
    if (leased === true) return undefined;
    if (leased === false) return this.blocked(entry, undefined);
    return this.local.check(entry, now, canWait);
  }

  async checkAsync(entry: Entry, now: number): Promise<CheckResult> {
    const scope = this.scopeOf(entry);
    if (scope === undefined) return undefined;
    const decision = await this.limiter.acquire(entry.acquireCount, scope);
    if (decision.status === 'unavailable') return this.fallBack(entry, now, decision);
    this.reporter.answered(decision);
    if (decision.status === 'pass') return undefined;
    if (decision.status === 'wait') return decision.waitMs;
    return this.blocked(entry, decision.retryAfterMs);
  }

  refund(entry: Entry, slotAt: number): void {
    // A wait reserved in the store is not given back (one more round trip for an aborted call):
    // the cluster's pacing loses that one slot.
    if (this.localWaits.delete(entry)) this.local.refund?.(entry, slotAt);
  }

  private fallBack(entry: Entry, now: number, decision: ClusterUnavailable): CheckResult {
    const local = this.cluster.fallbackToLocal;
    this.reporter.fellBack(entry.resource, decision, local ? 'local' : 'pass');
    if (!local) return undefined;
    const result = this.local.check(entry, now, true);
    if (typeof result === 'number') this.localWaits.add(entry);
    return result;
  }

  private blocked(entry: Entry, retryAfterMs: number | undefined): FlowBlockError {
    return new FlowBlockError({ resource: entry.resource, rule: this.rule, retryAfterMs, origin: entry.origin });
  }

  /**
   * The count within the rule this entry takes from: `''` for the rule's one shared count, the
   * origin for `'other'` rules (each origin counted on its own); `undefined` when the rule does
   * not apply to the entry's origin.
   */
  private scopeOf(entry: Entry): string | undefined {
    const limitOrigin = this.rule.limitOrigin;
    if (limitOrigin === 'default') return '';
    if (limitOrigin === 'other') return entry.origin === '' || this.namedOrigins.has(entry.origin) ? undefined : entry.origin;
    return entry.origin === limitOrigin ? '' : undefined;
  }
}
