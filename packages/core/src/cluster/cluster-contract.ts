import type { Entry } from '../kernel/entry';
import type { BlockError } from '../kernel/errors';
import { join, type RuleReader } from '../kernel/rule-reader';
import type { Checker } from '../kernel/rule-kind';

// Cluster mode's contract: what a backend implements (`@floodgate/core/cluster`, the
// backend's side), the `cluster` field rules take, and how a rule kind binds its rules to the
// store (the kind's side, below). Kinds import this module; the cluster wrapper applies it.

/**
 * Why a cluster check was decided without the shared store: it did not answer within the
 * backend's timeout (`'timeout'`), answered with an error (`'error'`), its connection is not
 * ready (`'notReady'`), or the backend's breaker is open after repeated failures and the store
 * is not being asked until its cool-down ends (`'breakerOpen'`).
 */
export type ClusterUnavailableReason = 'timeout' | 'error' | 'notReady' | 'breakerOpen';

/** What every {@link ClusterDecision} carries. */
export interface ClusterDecisionBase {
  /**
   * Set on the first answer from the store after it was declared down (its breaker opened):
   * how long it was down, in ms. The engine emits `clusterRecover` then.
   */
  readonly recoveredAfterMs?: number;
}

/** The store admitted the call. */
export interface ClusterPass extends ClusterDecisionBase {
  /** Always `'pass'`. */
  readonly status: 'pass';
  /**
   * What the backend needs to give the tokens back with {@link ClusterLimiter.release} (which
   * bucket or refill they were taken in), opaque to the engine; absent when it cannot.
   */
  readonly receipt?: unknown;
}

/** The store reserved a slot `waitMs` from now (a `throttle` rule queues the call). */
export interface ClusterWait extends ClusterDecisionBase {
  /** Always `'wait'`. */
  readonly status: 'wait';
  /** How long the call waits for its slot, in ms. */
  readonly waitMs: number;
}

/** The store refused the call: the shared limit is reached. */
export interface ClusterBlock extends ClusterDecisionBase {
  /** Always `'block'`. */
  readonly status: 'block';
  /** ms until a retry could pass, where known. */
  readonly retryAfterMs: number | undefined;
  /** For {@link ClusterLimiter.acquireEach}: the position of the scope that was refused. */
  readonly index?: number;
}

/** The store could not decide; the rule falls back (to the local rule, or lets the call pass). */
export interface ClusterUnavailable {
  /** Always `'unavailable'`. */
  readonly status: 'unavailable';
  /** Why the store did not decide. */
  readonly reason: ClusterUnavailableReason;
  /** The error the store answered with, for `'error'`. */
  readonly error?: unknown;
}

/** The answer of {@link ClusterLimiter.acquire}. */
export type ClusterDecision = ClusterPass | ClusterWait | ClusterBlock | ClusterUnavailable;

/** What a cluster rule asks its backend to enforce, shared by every instance. */
export interface ClusterLimiterSpecBase {
  /**
   * The rule's identity in the store, the same in every instance that runs the same rule
   * (derived from the resource and what the rule counts, not from its threshold, so instances
   * rolling out a new threshold still share one count).
   */
  readonly key: string;
  /** The rule's threshold: per instance for `'perInstance'`, for all of them for `'global'`. */
  readonly threshold: number;
  /** Whether `threshold` is each instance's share (`'perInstance'`) or the cluster's (`'global'`). */
  readonly thresholdType: ClusterThresholdType;
}

/**
 * A `reject` flow rule: passes while the calls admitted in the sliding window (2 buckets of
 * 500 ms, as local rules) + acquireCount <= threshold.
 */
export interface ClusterWindowSpec extends ClusterLimiterSpecBase {
  /** Always `'window'`. */
  readonly kind: 'window';
  /** Tokens an instance leases per round trip; 0 asks the store on every call. */
  readonly leaseTokens: number;
}

/** A `throttle` flow rule: calls spaced `1000 * acquireCount / threshold` ms apart, shared. */
export interface ClusterPaceSpec extends ClusterLimiterSpecBase {
  /** Always `'pace'`. */
  readonly kind: 'pace';
  /** Longest wait a call may be queued for; beyond it, the call is blocked. */
  readonly maxQueueingTimeMs: number;
  /** The pacing window in ms (1000 for flow rules, the rule's `durationMs` for hotspot rules). */
  readonly durationMs: number;
}

/**
 * A QPS `reject` hotspot rule: a token bucket per parameter value of `threshold + burstCount`
 * tokens, refilled once a full `durationMs` has passed (Sentinel's ParamFlowChecker).
 */
export interface ClusterTokenBucketSpec extends ClusterLimiterSpecBase {
  /** Always `'tokenBucket'`. */
  readonly kind: 'tokenBucket';
  /** Tokens a value's bucket holds beyond `threshold`. */
  readonly burstCount: number;
  /** How long a bucket takes to refill, in ms. */
  readonly durationMs: number;
}

/** What a cluster rule asks its backend to enforce. */
export type ClusterLimiterSpec = ClusterWindowSpec | ClusterPaceSpec | ClusterTokenBucketSpec;

/**
 * One cluster rule's handle on the backend, made once when rules compile. `scope` separates
 * counts within a rule: the origin for `limitOrigin: 'other'` rules, the parameter value for
 * hotspot rules, `''` otherwise. A scope is at most 128 characters: a longer origin or value
 * comes as its SHA-256 digest.
 */
export interface ClusterLimiter {
  /**
   * Asks the store for `acquireCount` tokens. Never rejects and never waits longer than the
   * backend's timeout: failures come back as {@link ClusterUnavailable}.
   * @param threshold - overrides the spec's threshold for this call (a hotspot rule's
   * `specificItems`).
   */
  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision>;
  /**
   * As {@link ClusterLimiter.acquire} for several scopes at once (a hotspot rule's array
   * argument: each element is a value), all or nothing: when one scope is refused, none is
   * charged, and the block names the refused scope's position. Implemented by the limiters of
   * hotspot rules (`'tokenBucket'`, and `'pace'`).
   * @param thresholds - each scope's threshold, in order.
   */
  acquireEach?(
    acquireCount: number,
    scopes: readonly string[],
    thresholds: readonly number[],
  ): Promise<ClusterDecision>;
  /**
   * Decides synchronously from tokens already leased to this instance: `true` (taken), `false`
   * (the shared limit is known to be reached for now) or `undefined` (nothing leased: the caller
   * decides by the local rule). Without leasing, always `undefined`.
   */
  tryAcquireLeased(acquireCount: number, scope: string): boolean | undefined;
  /**
   * Gives back tokens an earlier `acquire` (or `acquireEach`) took, for a call that was then
   * refused by a later check or cancelled: best effort, never awaited by the caller, never
   * throws. Only within the bucket (or refill period) the tokens were taken in, which `receipt`
   * (the {@link ClusterPass.receipt} of that decision) names, and never below zero. Optional:
   * without it, such a call keeps its shared tokens.
   */
  release?(acquireCount: number, scopes: readonly string[], receipt: unknown): void;
}

/** A circuit breaker's state, as a shared store reports it. */
export type ClusterCircuitState = 'closed' | 'open' | 'halfOpen';

/**
 * A circuit breaker rule with `cluster: true`: one breaker shared by every instance, whose
 * window and state the store keeps, with Sentinel's semantics (the rule's fields, as the local
 * breaker reads them): closed → open when, with at least `minRequestAmount` calls completed in
 * the window (`statIntervalMs` in `bucketCount` buckets), the ratio or count is greater than
 * `threshold` (a ratio threshold of 1 opens at 1); open for `retryTimeoutMs`; then
 * `halfOpenProbes` probes, each held by one instance at a time under a lease that expires
 * `retryTimeoutMs` after it was taken (counting as a failed probe); all succeeding close the
 * breaker and empty its window, one failing reopens it.
 */
export interface ClusterBreakerSpec {
  /** The breaker's identity in the store (see `ClusterLimiterSpecBase.key`). */
  readonly key: string;
  /** What trips the breaker: the ratio of slow calls, the ratio of failed calls, or the count of failed calls. */
  readonly strategy: 'slowRequestRatio' | 'errorRatio' | 'errorCount';
  /** The ratio or count the window's value must exceed to open the breaker. */
  readonly threshold: number;
  /** A call slower than this is slow (`slowRequestRatio` only; absent otherwise). */
  readonly maxAllowedRtMs?: number;
  /** No trip while the window holds fewer completed calls. */
  readonly minRequestAmount: number;
  /** The window's length, in ms. */
  readonly statIntervalMs: number;
  /** Buckets in the window. */
  readonly bucketCount: number;
  /** How long the breaker stays open before probing, and how long a probe's lease lasts, in ms. */
  readonly retryTimeoutMs: number;
  /** Probes let through when half-open; all must succeed to close. */
  readonly halfOpenProbes: number;
}

/** The shared breaker as the store last told this instance. */
export interface ClusterBreakerView {
  /** The shared breaker's state. */
  readonly state: ClusterCircuitState;
  /**
   * ms from when this view was received: while open, until probing may start (0: due); while
   * half-open with every probe held, until the oldest held probe's lease expires; 0 otherwise.
   */
  readonly retryAfterMs: number;
  /**
   * The value of the transition into this state: the ratio or count that opened a closed
   * breaker, `1` when a probe failed, `undefined` otherwise.
   */
  readonly value: number | undefined;
  /**
   * Grows with every change of the shared breaker that instances must learn (a transition, a probe
   * given back): of two views, the one with the greater version is newer.
   */
  readonly version: number;
}

/**
 * What {@link ClusterBreaker.acquire} decides for one call: `'pass'` (closed), `'probe'` (due to
 * probe: the call passes as a probe holding `lease`, for `settle()`), `'block'` (open, or
 * half-open with every probe held, for `retryAfterMs`), or unavailable. A recovery is told to
 * the listeners ({@link ClusterBreakerListener.learned}), not here.
 */
export type ClusterBreakerDecision =
  | { readonly status: 'pass' }
  | { readonly status: 'probe'; readonly lease: unknown }
  | { readonly status: 'block'; readonly retryAfterMs: number }
  | ClusterUnavailable;

/** How a probe of a shared breaker ended (see {@link ClusterBreaker.settle}). */
export type ClusterProbeOutcome = 'success' | 'failure' | 'unused';

/** Told what an instance learns of its shared breaker. */
export interface ClusterBreakerListener {
  /**
   * The store answered with `view`: a reply to this instance (called for every reply, whatever
   * its version, so the listener knows the store is there, and with times measured now), or a
   * change published by an instance (`published`: its times were measured when it was sent, so
   * only a newer version says more than what the instance knows). `recoveredAfterMs` is set when
   * this answer ends an outage.
   */
  learned(view: ClusterBreakerView, recoveredAfterMs: number | undefined, published?: boolean): void;
  /** A call to the store for this breaker (reporting completions) failed. */
  unavailable(decision: ClusterUnavailable): void;
}

/**
 * One shared circuit breaker's handle on the backend, made once when rules compile. It never
 * needs a round trip per call while the breaker is closed: completions are reported in batches
 * (`record`), the state comes back with every answer and, from other instances, as it changes.
 */
export interface ClusterBreaker {
  /** Tells `listener` what this instance learns from now on; returns what stops it. */
  watch(listener: ClusterBreakerListener): () => void;
  /**
   * Whether what this instance last learned is recent enough to decide calls on (no call then
   * asks the store while the breaker is closed, or open before its deadline).
   */
  fresh(): boolean;
  /** Asks the store for the breaker's state in the background; listeners learn it. */
  refresh(): void;
  /**
   * Asks the store whether a call may pass: the breaker's state, and a probe lease when the
   * breaker is due to probe and a probe is free. Never rejects; failures come back as
   * {@link ClusterUnavailable}. Listeners learn the state before the promise settles.
   */
  acquire(): Promise<ClusterBreakerDecision>;
  /** Reports one completed call (best effort, batched, never awaited). */
  record(slow: boolean, error: boolean): void;
  /**
   * Ends a probe and gives its lease back: `'success'` counts towards closing the breaker for
   * every instance, `'failure'` reopens it, `'unused'` (the call did not run: another check
   * refused it, or it was cancelled) frees the probe for another call. Ignored once the lease
   * has expired or its half-open period is over. Best effort, never awaited.
   */
  settle(lease: unknown, outcome: ClusterProbeOutcome): void;
}

/**
 * A shared store that cluster rules take their decisions from, so limits hold across every
 * process. `@floodgate/redis` provides one (`redisCluster()`); the engine takes it as the
 * `cluster` option and asks it for a {@link ClusterLimiter} per cluster flow or hotspot rule, and
 * a {@link ClusterBreaker} per cluster circuit breaker rule, when rules load.
 */
export interface ClusterBackend {
  /** A name for logs and events, e.g. `'redis'`. */
  readonly name: string;
  /**
   * A handle for one cluster rule. Called when rules compile, never per call; the engine keeps
   * the limiter of a rule that did not change across reloads (and with it, its leases).
   */
  limiter(spec: ClusterLimiterSpec): ClusterLimiter;
  /**
   * A handle for one shared circuit breaker, kept across reloads of its unchanged rule.
   * Optional: without it, circuit breaker rules with `cluster: true` act locally.
   */
  breaker?(spec: ClusterBreakerSpec): ClusterBreaker;
}

/** How a cluster rule's threshold is shared between instances. */
export type ClusterThresholdType = 'global' | 'perInstance';

/**
 * Cluster settings of a flow or hotspot rule: with `cluster` set and a cluster backend given
 * to the engine, the rule takes its decision from the shared store, so the limit holds across
 * every process.
 */
export interface ClusterRuleOptions {
  /**
   * `'global'`: the threshold is shared by all instances; `'perInstance'`: the threshold is
   * multiplied by the number of live instances.
   * @defaultValue 'global'
   */
  readonly thresholdType?: ClusterThresholdType;
  /**
   * When the backend is slow or down: `true` decides by the local rule, `false` lets the call
   * pass.
   * @defaultValue true
   */
  readonly fallbackToLocal?: boolean;
  /**
   * Tokens an instance takes from the store per round trip (`reject` flow rules only), for
   * high-rate rules: calls are then decided in process from the lease, and a sync `entry()` can
   * use it too. Leased tokens count as admitted in the store when leased and expire at the end
   * of the 500 ms bucket they were leased in, so the limit is never exceeded, but unused leased
   * tokens are lost: the cluster may admit up to `leaseTokens - 1` fewer calls per instance per
   * bucket than the threshold. `0` asks the store on every call.
   * @defaultValue 0
   */
  readonly leaseTokens?: number;
}

/** {@link ClusterRuleOptions} with every default resolved. */
export interface ClusterRuleConfig {
  /** Whether the threshold is each instance's share or the cluster's. */
  readonly thresholdType: ClusterThresholdType;
  /** Whether the local rule decides while the backend is unavailable (else calls pass). */
  readonly fallbackToLocal: boolean;
  /** Tokens an instance takes from the store per round trip (0: none leased). */
  readonly leaseTokens: number;
}

/** Defaults of a rule's `cluster` settings. */
export const CLUSTER_RULE_DEFAULTS = Object.freeze({
  /** One threshold shared by every instance. */
  thresholdType: 'global',
  /** Decide locally while the backend is unavailable (Sentinel's `fallbackToLocalWhenFail`). */
  fallbackToLocal: true,
  /** No leasing: one round trip to the store per call. */
  leaseTokens: 0,
} as const);

/** Which cluster settings a rule can take, from what kind of rule it is. */
export interface ClusterSupport {
  /** Why this rule cannot be a cluster rule at all; `undefined` when it can. */
  readonly unsupported?: string | undefined;
  /** Whether the rule may lease tokens (`reject` flow rules). @defaultValue false */
  readonly leasable?: boolean;
}

/**
 * Validates a rule's `cluster` field; `undefined` when absent. `support` says what the rule can
 * take (a rule kind the backend cannot enforce is rejected at load, not ignored).
 */
export function normalizeClusterOptions(
  value: unknown,
  path: string,
  reader: RuleReader,
  support: ClusterSupport = {},
): ClusterRuleConfig | undefined {
  if (value === undefined) return undefined;
  const at = join(path, 'cluster');
  const obj = reader.object(value, at);
  if (obj === undefined) return undefined;
  if (support.unsupported !== undefined) reader.fail(at, support.unsupported);
  reader.knownKeys(obj, ['thresholdType', 'fallbackToLocal', 'leaseTokens'], at);
  const leaseTokens = reader.number(
    obj,
    'leaseTokens',
    at,
    { min: 0, integer: true },
    CLUSTER_RULE_DEFAULTS.leaseTokens,
  );
  if (leaseTokens > 0 && support.leasable !== true) {
    reader.fail(join(at, 'leaseTokens'), `applies to flow rules with behavior 'reject' only, got ${leaseTokens}`);
  }
  return {
    thresholdType: reader.oneOf(
      obj,
      'thresholdType',
      at,
      ['global', 'perInstance'],
      CLUSTER_RULE_DEFAULTS.thresholdType,
    ),
    fallbackToLocal: reader.boolean(obj, 'fallbackToLocal', at, CLUSTER_RULE_DEFAULTS.fallbackToLocal),
    leaseTokens,
  };
}

/** What a call asks of the shared store for one cluster rule. */
export interface ClusterRequest {
  /** The counts within the rule the call takes from (an origin, parameter values; `''` for the rule's one count). */
  readonly scopes: readonly string[];
  /** Each scope's threshold, where it differs from the rule's (hotspot `specificItems`). */
  readonly thresholds?: readonly number[];
  /** The values the scopes were made from, for the block error (hotspot values). */
  readonly values?: readonly unknown[];
  /** Whether the scopes come from one array argument (all or nothing). */
  readonly each: boolean;
}

/**
 * How a rule kind takes part in cluster mode: the one cluster wrapper (`cluster/`) applies it to
 * every rule of the kind that has `cluster` set, when the engine has a backend. The kind's own
 * checker stays the fallback, and decides a sync `entry()`.
 */
export interface ClusterBinding<R> {
  /**
   * What the rule counts, naming it in the store: its kind, resource and the fields that say what
   * is counted, never its threshold (see `ClusterLimiterSpecBase.key`).
   */
  identity(rule: R): readonly string[];
  /** What the store must enforce for the rule, under `key`. */
  spec(rule: R, key: string): ClusterLimiterSpec;
  /** What `entry` asks of the store; `undefined` when the rule does not apply to it (it passes). */
  request(rule: R, local: Checker, entry: Entry): ClusterRequest | undefined;
  /** The block error of a call the store refused. */
  refuse(rule: R, entry: Entry, request: ClusterRequest, decision: ClusterBlock): BlockError;
  /** Whether a sync `entry()` may decide from tokens leased to this instance. */
  readonly leases: boolean;
  /**
   * The window the rule's local check counts over, in ms: for that long after a fallback, calls
   * the store admits must also pass the local check (see `ClusterChecker`).
   */
  localWindowMs(rule: R): number;
}

/** Told of a local breaker's transitions (see {@link LocalBreaker.divert}). */
export type BreakerTransitionListener = (
  from: ClusterCircuitState,
  to: ClusterCircuitState,
  value: number | undefined,
) => void;

/**
 * A breaker kind's checker for one rule, decided in process, as the cluster wrapper drives it
 * for a shared breaker: it sees every completion (so its window is warm), and decides when the
 * store cannot (its fallback).
 */
export interface LocalBreaker extends Checker {
  /** Its rule's id among the resource's rules of its kind (`circuitBreaker#0`), for events and metrics. */
  readonly ruleId: string;
  /** Its state at `now`; `retryAfterMs` while open (ms until probing) or half-open with every probe taken. */
  status(now: number): { readonly state: ClusterCircuitState; readonly retryAfterMs?: number };
  /**
   * Sends its transitions to `listener` instead of announcing them (`circuitStateChange`): the
   * wrapper announces the state the instance enforces, shared or local.
   */
  divert(listener: BreakerTransitionListener): void;
}

/**
 * How a circuit breaker kind takes part in cluster mode: the cluster wrapper (`cluster/`) makes
 * every rule of the kind with `cluster` set one breaker shared through the backend's
 * `breaker()`, with the kind's own checker as its local breaker.
 */
export interface ClusterBreakerBinding<R> {
  /** What names the breaker in the store: its kind, resource and the fields that shape its window. */
  identity(rule: R): readonly string[];
  /** What the store must keep for the rule, under `key`. */
  breakerSpec(rule: R, key: string): ClusterBreakerSpec;
  /** The rule's local breaker: the checker the kind compiled for it. */
  local(checker: Checker): LocalBreaker;
  /** The block error of a call the shared breaker refused. */
  refuse(rule: R, entry: Entry, retryAfterMs: number): BlockError;
}

/**
 * What a kind whose rules may take `cluster` adds to its `RuleKind`: how the cluster wrapper
 * (`cluster/`) asks a shared store for them.
 */
export interface ClusterKind<R> {
  /** The kind's binding to the store: a limiter per rule, or a shared breaker per rule. */
  readonly cluster?: ClusterBinding<R> | ClusterBreakerBinding<R>;
}
