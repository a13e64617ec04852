import { Floodgate } from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import { ManualClock, type Clock } from '@floodgate/core/testing';
import type { ClusterFallbackEvent } from '@floodgate/core/metrics';
import type {
  ClusterBackend,
  ClusterDecision,
  ClusterLimiter,
  ClusterLimiterSpec,
  ClusterPaceSpec,
  ClusterTokenBucketSpec,
  ClusterWindowSpec,
} from '@floodgate/core/cluster';

/**
 * How the store answers: `'up'` decides; `'timeout'` and `'error'` answer `unavailable` as the
 * contract says; `'reject'` (a rejected promise) and `'throw'` (a synchronous throw) break the
 * contract, as a faulty custom backend would.
 */
export type StoreHealth = 'up' | 'timeout' | 'error' | 'reject' | 'throw';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });
/** The engine's second-level window: 2 buckets of 500 ms. */
const BUCKET_MS = 500;

/**
 * A cluster backend in process, honouring the `ClusterBackend` contract with the semantics of
 * `@floodgate/redis` (a sliding window of 2 × 500 ms for `window`, shared pacing for `pace`,
 * Sentinel's per-value token bucket for `tokenBucket`, all or nothing for `acquireEach`), on
 * the engine's clock, for one instance (`thresholdType` makes no difference). Not a mock of
 * Redis: engine tests use it where a shared store must decide, fail, or be given tokens back.
 */
export class MemoryClusterBackend implements ClusterBackend {
  readonly name = 'memory';
  /** How the store answers from now on. */
  health: StoreHealth = 'up';
  /** Every limiter made, by its rule's key. */
  readonly limiters = new Map<string, MemoryLimiter>();

  constructor(
    private readonly clock: Clock,
    /** Limiters leave out `acquireEach` (it is optional in the contract). */
    private readonly withoutAcquireEach = false,
  ) {}

  limiter(spec: ClusterLimiterSpec): ClusterLimiter {
    const limiter = new MemoryLimiter(spec, this.clock, () => this.health);
    this.limiters.set(spec.key, limiter);
    if (!this.withoutAcquireEach) return limiter;
    return {
      acquire: limiter.acquire.bind(limiter),
      tryAcquireLeased: limiter.tryAcquireLeased.bind(limiter),
      release: limiter.release.bind(limiter),
    };
  }

  /** Tokens given back beyond those taken, over every limiter (always 0 for a sound engine). */
  overReleased(): number {
    let over = 0;
    for (const limiter of this.limiters.values()) over += limiter.overReleased();
    return over;
  }
}

/** One value's token bucket (`tokenBucket`). */
interface Bucket {
  time: number;
  tokens: number;
}

/** One rule's state in the store. */
export class MemoryLimiter implements ClusterLimiter {
  /** `window`: admitted tokens per scope, by bucket start. */
  private readonly windows = new Map<string, Map<number, number>>();
  /** `pace`: the latest slot taken per scope. */
  private readonly latest = new Map<string, number>();
  /** `tokenBucket`: the bucket per scope. */
  private readonly buckets = new Map<string, Bucket>();
  /** `window`: the tokens taken and not given back per scope, as `[bucket start, count]`, latest last. */
  private readonly outstanding = new Map<string, [number, number][]>();
  /** Tokens given back that no call had taken (always 0 for a sound engine). */
  private overGiven = 0;
  /** Calls of `release`, as `[acquireCount, scopes]`. */
  readonly releases: [number, readonly string[]][] = [];

  constructor(
    readonly spec: ClusterLimiterSpec,
    private readonly clock: Clock,
    private readonly health: () => StoreHealth,
  ) {}

  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision> {
    return this.acquireEach(acquireCount, [scope], [threshold ?? this.spec.threshold]);
  }

  acquireEach(
    acquireCount: number,
    scopes: readonly string[],
    thresholds: readonly number[],
  ): Promise<ClusterDecision> {
    const health = this.health();
    if (health === 'throw') throw new Error('store broke (sync)');
    if (health === 'reject') return Promise.reject(new Error('store broke (async)'));
    if (health === 'timeout') return Promise.resolve({ status: 'unavailable', reason: 'timeout' });
    if (health === 'error')
      return Promise.resolve({ status: 'unavailable', reason: 'error', error: new Error('store error') });
    const now = this.clock.now();
    const spec = this.spec;
    const decision =
      spec.kind === 'window'
        ? this.window(spec, acquireCount, scopes[0]!, now)
        : spec.kind === 'pace'
          ? this.pace(spec, acquireCount, scopes, thresholds, now)
          : this.tokenBucket(spec, acquireCount, scopes, thresholds, now);
    return Promise.resolve(decision);
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }

  /**
   * Gives back a window's tokens: `acquireCount` of those taken for the scope in the bucket the
   * receipt names, while that bucket is still in the window (pacing and buckets keep theirs, as
   * in Redis).
   */
  release(acquireCount: number, scopes: readonly string[], receipt: unknown): void {
    this.releases.push([acquireCount, scopes]);
    if (this.spec.kind !== 'window') return;
    const scope = scopes[0]!;
    const taken = this.outstanding.get(scope) ?? [];
    let i = taken.length - 1;
    while (i >= 0 && (taken[i]![0] !== receipt || taken[i]![1] !== acquireCount)) i--;
    if (i < 0) {
      this.overGiven += acquireCount;
      return;
    }
    taken.splice(i, 1);
    const buckets = this.windows.get(scope)!;
    if (buckets.has(receipt as number)) buckets.set(receipt as number, buckets.get(receipt as number)! - acquireCount);
  }

  /** Tokens given back that no call had taken. */
  overReleased(): number {
    return this.overGiven;
  }

  /** Every scope the store has been asked about. */
  scopes(): string[] {
    return [...new Set([...this.windows.keys(), ...this.latest.keys(), ...this.buckets.keys()])];
  }

  /** The tokens the window holds for `scope` now. */
  windowCount(scope: string, now = this.clock.now()): number {
    const buckets = this.windows.get(scope);
    const start = bucketStart(now);
    return (buckets?.get(start) ?? 0) + (buckets?.get(start - BUCKET_MS) ?? 0);
  }

  private window(spec: ClusterWindowSpec, acquireCount: number, scope: string, now: number): ClusterDecision {
    const count = this.windowCount(scope, now);
    if (count + acquireCount > spec.threshold)
      return { status: 'block', retryAfterMs: bucketStart(now) + BUCKET_MS - now };
    let buckets = this.windows.get(scope);
    if (buckets === undefined) this.windows.set(scope, (buckets = new Map()));
    const start = bucketStart(now);
    for (const at of buckets.keys()) if (at < start - BUCKET_MS) buckets.delete(at);
    buckets.set(start, (buckets.get(start) ?? 0) + acquireCount);
    let taken = this.outstanding.get(scope);
    if (taken === undefined) this.outstanding.set(scope, (taken = []));
    taken.push([start, acquireCount]);
    return { status: 'pass', receipt: start };
  }

  private pace(
    spec: ClusterPaceSpec,
    acquireCount: number,
    scopes: readonly string[],
    thresholds: readonly number[],
    now: number,
  ): ClusterDecision {
    if (acquireCount <= 0) return PASS;
    const slots: number[] = [];
    let wait = 0;
    for (let i = 0; i < scopes.length; i++) {
      const threshold = thresholds[i]!;
      if (threshold <= 0) return { status: 'block', retryAfterMs: undefined, index: i };
      const expected =
        (this.latest.get(scopes[i]!) ?? Number.NEGATIVE_INFINITY) + (spec.durationMs * acquireCount) / threshold;
      if (expected <= now) {
        slots.push(now);
        continue;
      }
      if (expected - now > spec.maxQueueingTimeMs)
        return { status: 'block', retryAfterMs: expected - now - spec.maxQueueingTimeMs, index: i };
      slots.push(expected);
      wait = Math.max(wait, expected - now);
    }
    scopes.forEach((scope, i) => this.latest.set(scope, slots[i]!));
    return wait > 0 ? { status: 'wait', waitMs: wait } : PASS;
  }

  private tokenBucket(
    spec: ClusterTokenBucketSpec,
    acquireCount: number,
    scopes: readonly string[],
    thresholds: readonly number[],
    now: number,
  ): ClusterDecision {
    const next: Bucket[] = [];
    for (let i = 0; i < scopes.length; i++) {
      const tokens = thresholds[i]!;
      const max = tokens + spec.burstCount;
      if (tokens === 0 || acquireCount > max) return { status: 'block', retryAfterMs: undefined, index: i };
      const bucket = this.buckets.get(scopes[i]!);
      if (bucket === undefined) {
        next.push({ time: now, tokens: max - acquireCount });
        continue;
      }
      const elapsed = now - bucket.time;
      const refill = elapsed > spec.durationMs;
      const available = refill
        ? Math.min(bucket.tokens + Math.floor((elapsed * tokens) / spec.durationMs), max)
        : bucket.tokens;
      if (available < acquireCount) return { status: 'block', retryAfterMs: undefined, index: i };
      next.push({ time: refill ? now : bucket.time, tokens: available - acquireCount });
    }
    scopes.forEach((scope, i) => this.buckets.set(scope, next[i]!));
    return PASS;
  }
}

function bucketStart(now: number): number {
  return Math.floor(now / BUCKET_MS) * BUCKET_MS;
}

/** An engine on a manual clock over an in-process store (see {@link MemoryClusterBackend}), with the fallbacks it reports. */
export function clustered(rules: RuleSetOptions, health: StoreHealth = 'up', withoutAcquireEach = false) {
  const clock = new ManualClock();
  const backend = new MemoryClusterBackend(clock, withoutAcquireEach);
  backend.health = health;
  const fg = new Floodgate({ clock, cluster: backend });
  const fallbacks: ClusterFallbackEvent[] = [];
  fg.on('clusterFallback', (event) => fallbacks.push(event));
  fg.loadRules(rules);
  return { fg, clock, backend, fallbacks };
}
