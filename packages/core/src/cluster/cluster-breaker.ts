import type {
  ClusterBreaker,
  ClusterBreakerBinding,
  ClusterBreakerDecision,
  ClusterBreakerView,
  ClusterCircuitState,
  ClusterUnavailable,
  LocalBreaker,
} from './cluster-contract';
import type { Entry } from '../kernel/entry';
import {
  DECIDE_LOCALLY,
  type AsyncCheckResult,
  type Checker,
  type CheckResult,
  type CompileContext,
  type EntryAttachment,
} from '../kernel/rule-kind';

/** A circuit breaker rule the wrapper can share. */
type BreakerRule = { readonly resource: string; readonly maxAllowedRtMs?: number };

/** A breaker's state with the time until it may change, as `circuitState()` reports it. */
interface BreakerStatus {
  readonly state: ClusterCircuitState;
  readonly retryAfterMs?: number;
}

/** What the shared breaker decides from what the instance knows: pass, refuse for ms, or ask the store. */
const ASK: unique symbol = Symbol('ask the store');

const SEVERITY: Readonly<Record<ClusterCircuitState, number>> = { closed: 0, halfOpen: 1, open: 2 };

/**
 * One circuit breaker rule shared by every instance (`cluster: true`), as the engine runs it:
 * the breaker's window and state live in the store (the backend's {@link ClusterBreaker}), and
 * this instance decides from what it last learned of them, so a call needs no round trip while
 * the breaker is closed, or open before its deadline. Completions are reported in batches.
 * Learning comes with every answer of the store and, for transitions made by other instances,
 * as they happen (the backend publishes them); what is learned longer ago than the backend
 * trusts is read again before the next call is decided.
 *
 * - **Probes**: when the shared breaker is due to probe, `enter()`/`run()` ask the store, which
 *   lends each probe to one instance at a time; the probe's outcome closes or reopens the breaker
 *   for all, a probe whose call did not run is given back, and a lease not given back within
 *   `retryTimeoutMs` counts as a failed probe. A sync `entry()` cannot wait for a lease: it is
 *   refused while the breaker is due to probe (`0` ms), and decided from the cached state
 *   otherwise.
 * - **Fallback**: while the store cannot be reached, the rule's local breaker (which sees every
 *   completion of this instance) decides, after an open shared breaker's deadline (until then the
 *   call is refused, as every instance would), and each such decision emits `clusterFallback`.
 *   After the store answers again, the local breaker stays in force beside the shared one until
 *   it is closed: the failures it saw while the store was away were never reported.
 * - **Events**: `circuitStateChange` announces the state this instance enforces (the shared one,
 *   or the local one while falling back) whenever it changes, on every instance; a shared
 *   transition carries the value that caused it.
 *
 * Kept across reloads of its unchanged rule, with what it learned.
 */
export class ClusterBreakerChecker<R extends BreakerRule> implements Checker {
  /** Probes and stale states ask the store, so `enter()` takes the asynchronous path. */
  readonly mayWait = true;
  private shared: ClusterCircuitState = 'closed';
  /** Until when the shared state holds (open: probing may start; half-open: the oldest probe's lease ends), clock ms. */
  private sharedRetryAt = Number.NEGATIVE_INFINITY;
  /** The version of the shared state learned last; -1 before anything was learned. */
  private sharedVersion = -1;
  private fallingBack = false;
  /** After a fallback: the local breaker decides beside the shared one until it is closed. */
  private localInForce = false;
  /** The state last announced with `circuitStateChange`. */
  private announced: ClusterCircuitState = 'closed';
  private retired = false;
  /** Entries the asynchronous check left to the local breaker alone (`DECIDE_LOCALLY`). */
  private readonly localOnly = new WeakSet<Entry>();
  private readonly slowAfterMs: number;
  private readonly unwatch: () => void;

  constructor(
    readonly rule: R,
    /** The same rule decided in process: sees every completion, decides while the store is away. */
    private readonly local: LocalBreaker,
    private readonly binding: ClusterBreakerBinding<R>,
    private readonly breaker: ClusterBreaker,
    private readonly backend: string,
    private readonly ctx: CompileContext,
  ) {
    this.slowAfterMs = rule.maxAllowedRtMs ?? Number.POSITIVE_INFINITY;
    local.divert((_from, _to, value) => this.announce(value));
    this.unwatch = breaker.watch({
      learned: (view, recoveredAfterMs, published) => this.learned(view, recoveredAfterMs, published === true),
      unavailable: (decision) => this.lost(decision),
    });
  }

  /** Its rule is no longer in force: it stops learning and announcing (calls admitted under it still exit through it). */
  retire(): void {
    this.retired = true;
    this.unwatch();
  }

  /**
   * Decides synchronously (`entry()`, and what the asynchronous check leaves to the local
   * breaker): from the shared state as last learned, without asking the store.
   */
  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    if (this.localOnly.delete(entry)) return this.local.check(entry, now, canWait);
    if (this.fallingBack) {
      const held = this.heldOpen(now);
      return held !== undefined ? this.binding.refuse(this.rule, entry, held) : this.local.check(entry, now, canWait);
    }
    if (!this.breaker.fresh()) this.breaker.refresh();
    const shared = this.sharedDecision(now);
    // Due to probe: a probe needs a lease from the store, which a sync call cannot wait for.
    if (shared === ASK) return this.binding.refuse(this.rule, entry, 0);
    if (shared !== undefined) return this.binding.refuse(this.rule, entry, shared);
    return this.localStillInForce(now) ? this.local.check(entry, now, canWait) : undefined;
  }

  /** Decides from what was learned while it is fresh; asks the store when probing is due or it is stale. */
  async checkAsync(entry: Entry, now: number): Promise<AsyncCheckResult> {
    if (!this.fallingBack && this.breaker.fresh()) {
      const shared = this.sharedDecision(now);
      if (shared === undefined) return this.afterShared(entry, now);
      if (shared !== ASK) return this.binding.refuse(this.rule, entry, shared);
    }
    let decision: ClusterBreakerDecision;
    try {
      decision = await this.breaker.acquire();
    } catch (error) {
      decision = { status: 'unavailable', reason: 'error', error };
    }
    const at = this.ctx.clock.now();
    switch (decision.status) {
      case 'unavailable':
        return this.fallBack(entry, decision, at);
      case 'pass':
        return this.afterShared(entry, at);
      case 'probe':
        entry.attach(new SharedProbe(this.breaker, decision.lease, this.slowAfterMs));
        return this.afterShared(entry, at);
      case 'block':
        return this.binding.refuse(this.rule, entry, decision.retryAfterMs);
    }
  }

  /** Reports the completed call to the shared breaker (batched) and to the local one. */
  onExit(entry: Entry, now: number, rtMs: number): void {
    this.local.onExit?.(entry, now, rtMs);
    this.breaker.record(rtMs > this.slowAfterMs, entry.hasError);
  }

  /** The state this instance enforces at `now` (see the class), with its rule. */
  status(now: number): BreakerStatus & { readonly rule: R } {
    return { ...this.enforced(now), rule: this.rule };
  }

  /** The shared state's decision: pass (`undefined`), refuse for ms, or ask the store. */
  private sharedDecision(now: number): number | undefined | typeof ASK {
    if (this.shared === 'closed') return undefined;
    return now < this.sharedRetryAt ? this.sharedRetryAt - now : ASK;
  }

  /** The shared breaker let the call through: the local breaker decides too while it is in force. */
  private afterShared(entry: Entry, now: number): AsyncCheckResult {
    if (!this.localStillInForce(now)) return undefined;
    this.localOnly.add(entry);
    return DECIDE_LOCALLY;
  }

  /** Whether the local breaker decides beside the shared one (after a fallback, until it is closed). */
  private localStillInForce(now: number): boolean {
    if (this.localInForce && this.local.status(now).state === 'closed') this.localInForce = false;
    return this.localInForce;
  }

  /** While falling back: an open shared breaker is still refused until its deadline. */
  private heldOpen(now: number): number | undefined {
    return this.shared === 'open' && now < this.sharedRetryAt ? this.sharedRetryAt - now : undefined;
  }

  private fallBack(entry: Entry, decision: ClusterUnavailable, now: number): AsyncCheckResult {
    this.startFallback(decision, entry.resource);
    const held = this.heldOpen(now);
    if (held !== undefined) return this.binding.refuse(this.rule, entry, held);
    this.localOnly.add(entry);
    return DECIDE_LOCALLY;
  }

  /** Completions could not be reported: the store is away, the local breaker takes over. */
  private lost(decision: ClusterUnavailable): void {
    if (this.retired || this.fallingBack) return;
    this.startFallback(decision, this.rule.resource);
  }

  private startFallback(decision: ClusterUnavailable, resource: string): void {
    this.fallingBack = true;
    this.localInForce = true;
    const events = this.ctx.events;
    if (events.has('clusterFallback')) {
      events.emit('clusterFallback', {
        resource,
        rule: this.rule,
        backend: this.backend,
        reason: decision.reason,
        ...(decision.error !== undefined ? { error: decision.error } : {}),
        decidedBy: 'local',
      });
    }
    // The switch to the local breaker, or an open shared breaker's deadline passing meanwhile.
    this.announce(undefined);
  }

  private learned(view: ClusterBreakerView, recoveredAfterMs: number | undefined, published: boolean): void {
    if (this.retired) return;
    const newer = view.version > this.sharedVersion;
    // A reply's times are measured now; a published change's when it was sent: only a newer one tells more.
    if (newer || (view.version === this.sharedVersion && !published)) {
      this.shared = view.state;
      this.sharedRetryAt = this.ctx.clock.now() + view.retryAfterMs;
      this.sharedVersion = view.version;
    }
    this.fallingBack = false;
    if (recoveredAfterMs !== undefined)
      this.ctx.events.emit('clusterRecover', { backend: this.backend, downForMs: recoveredAfterMs });
    this.announce(newer ? view.value : undefined);
  }

  /** Emits `circuitStateChange` when the state this instance enforces changed. */
  private announce(value: number | undefined): void {
    if (this.retired) return;
    const to = this.enforced(this.ctx.clock.now()).state;
    const from = this.announced;
    if (to === from) return;
    this.announced = to;
    const events = this.ctx.events;
    if (events.has('circuitStateChange'))
      events.emit('circuitStateChange', {
        resource: this.rule.resource,
        rule: this.rule,
        ruleId: this.local.ruleId,
        from,
        to,
        value,
      });
  }

  /**
   * The state enforced: while falling back, the local breaker's (an open shared breaker until its
   * deadline); after a fallback, the worse of the local and the shared; else the shared.
   */
  private enforced(now: number): BreakerStatus {
    if (this.fallingBack) {
      const held = this.heldOpen(now);
      return held !== undefined ? { state: 'open', retryAfterMs: held } : this.local.status(now);
    }
    const shared = this.sharedStatus(now);
    if (!this.localInForce) return shared;
    const local = this.local.status(now);
    return SEVERITY[local.state] > SEVERITY[shared.state] ? local : shared;
  }

  private sharedStatus(now: number): BreakerStatus {
    switch (this.shared) {
      case 'closed':
        return { state: 'closed' };
      case 'open':
        return { state: 'open', retryAfterMs: Math.max(0, this.sharedRetryAt - now) };
      case 'halfOpen':
        return now < this.sharedRetryAt
          ? { state: 'halfOpen', retryAfterMs: this.sharedRetryAt - now }
          : { state: 'halfOpen' };
    }
  }
}

/**
 * A probe of a shared breaker, attached to the entry it let through, holding the store's lease:
 * the call's outcome (no error and not slow: success) settles it for every instance. A call
 * that does not run (another check refused it, or it was cancelled) gives the probe back for
 * another call instead of failing it: one instance's own refusal (its QPS limit, say) says
 * nothing of the resource, and must not reopen the breaker for every instance. Settles once.
 */
class SharedProbe implements EntryAttachment {
  private settled = false;

  constructor(
    private readonly breaker: ClusterBreaker,
    private readonly lease: unknown,
    private readonly slowAfterMs: number,
  ) {}

  exited(entry: Entry, _now: number, rtMs: number): void {
    if (this.settled) return;
    this.settled = true;
    this.breaker.settle(this.lease, entry.hasError || rtMs > this.slowAfterMs ? 'failure' : 'success');
  }

  released(): void {
    if (this.settled) return;
    this.settled = true;
    this.breaker.settle(this.lease, 'unused');
  }

  /** The call ran, but its outcome was discarded (a client too slow sending): the probe goes back unused. */
  discarded(): void {
    this.released();
  }
}
