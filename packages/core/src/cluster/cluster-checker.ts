import type {
  ClusterBackend,
  ClusterBinding,
  ClusterBreakerBinding,
  ClusterDecision,
  ClusterLimiter,
  ClusterLimiterSpec,
  ClusterRequest,
  ClusterRuleConfig,
  ClusterUnavailable,
} from './cluster-contract';
import type { Entry } from '../kernel/entry';
import { MAX_DURATION_MS, show } from '../kernel/rule-reader';
import {
  DECIDE_LOCALLY,
  type AsyncCheckResult,
  type Checker,
  type CheckResult,
  type CompileContext,
  type EntryAttachment,
} from '../kernel/rule-kind';
import { ClusterBreakerChecker } from './cluster-breaker';

/** A flow or hotspot rule that may take the `cluster` field. */
type ClusterRule = { readonly resource?: string; readonly cluster?: ClusterRuleConfig };
/** A circuit breaker rule that may take `cluster: true`. */
type BreakerRule = { readonly resource: string; readonly cluster?: true; readonly maxAllowedRtMs?: number };

/**
 * Names cluster rules in the shared store. A rule's key must be the same in every instance
 * running that rule without any coordination, so it is derived from what the rule counts
 * (its kind, resource and what the kind says identifies it), not from its threshold: instances
 * rolling out a new threshold still share one count. Two rules of one resource that count the
 * same thing are told apart by their order (`#0`, `#1`).
 */
export class ClusterKeys {
  private readonly seen = new Map<string, number>();

  /** The key of the next rule with this identity. */
  next(parts: readonly string[]): string {
    const identity = parts.join('|');
    const nth = this.seen.get(identity) ?? 0;
    this.seen.set(identity, nth + 1);
    return `${identity}#${nth}`;
  }
}

/**
 * Wraps the checkers of a kind's rules that have `cluster` set so they take their decision from
 * the engine's cluster backend; rules without `cluster`, and every rule without a backend, are
 * left as they are. Limiters are kept across reloads while their spec is unchanged (and with
 * them, their leases); so are shared breakers, with what they learned. A breaker rule acts
 * locally when the backend cannot share breakers (no `breaker()`).
 */
export function withCluster<R extends object>(
  binding: ClusterBinding<R> | ClusterBreakerBinding<R> | undefined,
  rules: readonly R[],
  checkers: readonly Checker[],
  backend: ClusterBackend | undefined,
  ctx: CompileContext,
): readonly Checker[] {
  if (
    binding === undefined ||
    backend === undefined ||
    !rules.some((rule) => (rule as { cluster?: unknown }).cluster !== undefined)
  )
    return checkers;
  if ('breakerSpec' in binding)
    return withSharedBreakers(
      binding as unknown as ClusterBreakerBinding<BreakerRule>,
      rules as unknown as readonly BreakerRule[],
      checkers,
      backend,
      ctx,
    );
  return withClusterLimiters(
    binding as unknown as ClusterBinding<ClusterRule>,
    rules as unknown as readonly ClusterRule[],
    checkers,
    backend,
    ctx,
  );
}

function withSharedBreakers<R extends BreakerRule>(
  binding: ClusterBreakerBinding<R>,
  rules: readonly R[],
  checkers: readonly Checker[],
  backend: ClusterBackend,
  ctx: CompileContext,
): readonly Checker[] {
  if (backend.breaker === undefined) return checkers;
  const keys = new ClusterKeys();
  return checkers.map((local, i) => {
    const rule = rules[i]!;
    if (rule.cluster === undefined) return local;
    const spec = binding.breakerSpec(rule, keys.next(binding.identity(rule)));
    return ctx.reuse(
      { breaker: spec, backend: backend.name },
      () => new ClusterBreakerChecker(rule, binding.local(local), binding, backend.breaker!(spec), backend.name, ctx),
    );
  });
}

function withClusterLimiters<R extends ClusterRule>(
  binding: ClusterBinding<R>,
  rules: readonly R[],
  checkers: readonly Checker[],
  backend: ClusterBackend,
  ctx: CompileContext,
): readonly Checker[] {
  const keys = new ClusterKeys();
  return checkers.map((local, i) => {
    const rule = rules[i]!;
    if (rule.cluster === undefined) return local;
    const spec = binding.spec(rule, keys.next(binding.identity(rule)));
    const limiter = ctx.reuse({ limiter: spec, backend: backend.name }, () => makeLimiter(backend, spec));
    return new ClusterChecker(rule, rule.cluster, local, binding, limiter, backend.name, ctx);
  });
}

/**
 * The backend's limiter for `spec`; when the backend throws instead, a limiter that answers
 * every call `unavailable` with that error, so the rule falls back and the rules still load.
 */
function makeLimiter(backend: ClusterBackend, spec: ClusterLimiterSpec): ClusterLimiter {
  try {
    return backend.limiter(spec);
  } catch (error) {
    const down: ClusterDecision = { status: 'unavailable', reason: 'error', error };
    return {
      acquire: () => Promise.resolve(down),
      acquireEach: () => Promise.resolve(down),
      tryAcquireLeased: () => undefined,
    };
  }
}

/**
 * One cluster rule as the engine runs it. `enter()`/`run()` ask the shared store (through the
 * rule's {@link ClusterLimiter}); when the store cannot answer in time, or fails in any way,
 * the rule falls back: with `fallbackToLocal` its local check decides, at admission, together
 * with every other local check (so a concurrent burst cannot pass a local rule while Redis is
 * away), else the call passes. A sync `entry()` cannot wait for the store: it decides from
 * tokens leased to this instance where the rule leases, else by the local check.
 *
 * The switch-over bound: within the local rule's window after a fallback, a call the store
 * admits must pass the local check too. Without that, calls the store admitted just before an
 * outage (or just after it) would add to what the local rule admitted in the same window; with
 * it, every instance admits at most its local threshold per window while it switches to the
 * fallback and back, so the cluster admits at most `threshold × instances` (a refused call gives
 * its shared tokens back where the backend can release them).
 */
export class ClusterChecker<R extends ClusterRule> implements Checker {
  /** Cluster rules ask the store, so `enter()` takes the asynchronous path. */
  readonly mayWait = true;
  /** When the rule last fell back to its local check (clock ms). */
  private fellBackAt = Number.NEGATIVE_INFINITY;
  private readonly localWindowMs: number;

  constructor(
    readonly rule: R,
    private readonly cluster: ClusterRuleConfig,
    /** The same rule decided in process: the fallback, and the sync path. */
    private readonly local: Checker,
    private readonly binding: ClusterBinding<R>,
    private readonly limiter: ClusterLimiter,
    private readonly backend: string,
    private readonly ctx: CompileContext,
  ) {
    this.localWindowMs = binding.localWindowMs(rule);
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    if (this.binding.leases) {
      const request = this.binding.request(this.rule, this.local, entry);
      if (request === undefined) return undefined;
      let leased: boolean | undefined;
      try {
        leased = request.each ? undefined : this.limiter.tryAcquireLeased(entry.acquireCount, request.scopes[0]!);
      } catch (error) {
        if (this.fallBack(entry, { status: 'unavailable', reason: 'error', error }, now) !== DECIDE_LOCALLY)
          return undefined;
      }
      if (leased === true) return undefined;
      if (leased === false)
        return this.binding.refuse(this.rule, entry, request, { status: 'block', retryAfterMs: undefined });
    }
    return this.local.check(entry, now, canWait);
  }

  async checkAsync(entry: Entry): Promise<AsyncCheckResult> {
    const request = this.binding.request(this.rule, this.local, entry);
    if (request === undefined) return undefined;
    let decision: ClusterDecision;
    try {
      decision = await this.ask(entry.acquireCount, request);
      const problem = malformed(decision);
      if (problem !== undefined) throw new TypeError(`the ${this.backend} cluster limiter answered ${problem}`);
    } catch (error) {
      decision = { status: 'unavailable', reason: 'error', error };
    }
    if (decision.status === 'unavailable') return this.fallBack(entry, decision, this.ctx.clock.now());
    if (decision.recoveredAfterMs !== undefined) {
      this.ctx.events.emit('clusterRecover', { backend: this.backend, downForMs: decision.recoveredAfterMs });
    }
    switch (decision.status) {
      case 'pass':
        if (this.limiter.release !== undefined && decision.receipt !== undefined)
          entry.attach(new StoreRefund(this.limiter, request.scopes, decision.receipt));
        // Switching over: the local check decides too, so the local window is never exceeded.
        return this.cluster.fallbackToLocal && this.ctx.clock.now() - this.fellBackAt < this.localWindowMs
          ? DECIDE_LOCALLY
          : undefined;
      case 'wait':
        return decision.waitMs;
      case 'block':
        return this.binding.refuse(this.rule, entry, request, decision);
    }
  }

  private ask(acquireCount: number, request: ClusterRequest): Promise<ClusterDecision> {
    if (!request.each) return this.limiter.acquire(acquireCount, request.scopes[0]!, request.thresholds?.[0]);
    if (this.limiter.acquireEach === undefined) {
      return Promise.resolve({
        status: 'unavailable',
        reason: 'error',
        error: new TypeError(`the ${this.backend} cluster limiter has no acquireEach(), needed for array values`),
      });
    }
    return this.limiter.acquireEach(acquireCount, request.scopes, request.thresholds ?? []);
  }

  private fallBack(entry: Entry, decision: ClusterUnavailable, now: number): AsyncCheckResult {
    const local = this.cluster.fallbackToLocal;
    this.fellBackAt = now;
    const events = this.ctx.events;
    if (events.has('clusterFallback')) {
      events.emit('clusterFallback', {
        resource: entry.resource,
        rule: this.rule,
        backend: this.backend,
        reason: decision.reason,
        ...(decision.error !== undefined ? { error: decision.error } : {}),
        decidedBy: local ? 'local' : 'pass',
      });
    }
    return local ? DECIDE_LOCALLY : undefined;
  }
}

/**
 * Why `decision` is not one the cluster contract allows (`undefined` when it is): an object with
 * a known `status`, and for `'wait'` a wait a timer can hold.
 */
function malformed(decision: unknown): string | undefined {
  if (typeof decision !== 'object' || decision === null) return `${show(decision)}, not a decision`;
  const { status, waitMs } = decision as { status?: unknown; waitMs?: unknown };
  switch (status) {
    case 'pass':
    case 'block':
    case 'unavailable':
      return undefined;
    case 'wait':
      return typeof waitMs === 'number' && waitMs >= 0 && waitMs <= MAX_DURATION_MS
        ? undefined
        : `a wait of ${show(waitMs)} ms (must be within [0, ${MAX_DURATION_MS}])`;
    default:
      return `an unknown status ${show(status)}`;
  }
}

/** Gives shared tokens back when the call they admitted does not run (best effort). */
class StoreRefund implements EntryAttachment {
  constructor(
    private readonly limiter: ClusterLimiter,
    private readonly scopes: readonly string[],
    private readonly receipt: unknown,
  ) {}

  exited(): void {
    // The call ran: its tokens were spent.
  }

  released(entry: Entry): void {
    try {
      this.limiter.release!(entry.acquireCount, this.scopes, this.receipt);
    } catch {
      // Best effort: the store keeps the tokens.
    }
  }
}
