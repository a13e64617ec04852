import type { Checker, CheckResult } from '../engine/checker';
import type { Entry } from '../engine/entry';
import type { EventHub } from '../engine/events';
import { HotParamBlockError } from '../errors/hot-param-block-error';
import type { HotParamChecker } from '../hot-param/hot-param-checker';
import { hotParamKey } from '../hot-param/hot-param-key';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { ClusterLimiter, ClusterUnavailable } from './cluster-backend';
import { ClusterReporter } from './cluster-reporter';

/**
 * Checks one QPS cluster hotspot rule: `enter()`/`run()` take each value's tokens (or pacing
 * slot) from the shared store, so a value's limit holds across every process; when the store
 * cannot answer in time, the local rule decides (or the call passes). A sync `entry()` cannot
 * wait for the store and is decided by the local rule. The parameter value is read, keyed and
 * given its threshold exactly as the local rule does.
 */
export class ClusterHotParamChecker implements Checker {
  private readonly reporter: ClusterReporter;
  /** Entries whose wait was reserved by the local rule (so an abort refunds it there). */
  private readonly localWaits = new WeakSet<Entry>();

  constructor(
    readonly rule: HotParamRule,
    /** The same rule decided in process: the fallback, and the sync path. */
    private readonly local: HotParamChecker,
    private readonly limiter: ClusterLimiter,
    backendName: string,
    events: EventHub,
  ) {
    this.reporter = new ClusterReporter(events, backendName, rule);
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    return this.local.check(entry, now, canWait);
  }

  async checkAsync(entry: Entry, now: number): Promise<CheckResult> {
    const value = this.local.read(entry);
    if (value === undefined || value === null) return undefined;
    let decision;
    let values: readonly unknown[] | undefined;
    if (Array.isArray(value)) {
      values = value.filter((v) => v !== undefined && v !== null && hotParamKey(v) !== undefined);
      if (values.length === 0) return undefined;
      const keys = values.map((v) => hotParamKey(v)!);
      decision = await this.limiter.acquireEach!(entry.acquireCount, keys, keys.map((key) => this.local.thresholdOf(key)));
    } else {
      const key = hotParamKey(value);
      if (key === undefined) return undefined;
      decision = await this.limiter.acquire(entry.acquireCount, key, this.local.thresholdOf(key));
    }
    if (decision.status === 'unavailable') return this.fallBack(entry, now, decision);
    this.reporter.answered(decision);
    if (decision.status === 'pass') return undefined;
    if (decision.status === 'wait') return decision.waitMs;
    return new HotParamBlockError({
      resource: entry.resource,
      rule: this.rule,
      value: values === undefined ? value : values[decision.index ?? 0],
      retryAfterMs: decision.retryAfterMs,
      origin: entry.origin,
    });
  }

  refund(entry: Entry, slotAt: number): void {
    // A wait reserved in the store is not given back (see ClusterFlowChecker.refund).
    if (this.localWaits.delete(entry)) (this.local as Checker).refund?.(entry, slotAt);
  }

  private fallBack(entry: Entry, now: number, decision: ClusterUnavailable): CheckResult {
    const local = this.rule.cluster!.fallbackToLocal;
    this.reporter.fellBack(entry.resource, decision, local ? 'local' : 'pass');
    if (!local) return undefined;
    const result = this.local.check(entry, now, true);
    if (typeof result === 'number') this.localWaits.add(entry);
    return result;
  }
}
