import type { ClusterDecision, ClusterLimiter, ClusterWindowSpec } from '@floodgate/core/cluster';
import type { LimiterContext } from './limiter-context';
import { replyNumber } from './reply-number';
import { WINDOW_SCRIPT } from './scripts/window-script';
import { TokenLease } from './token-lease';

/** The engine's second-level window: 2 buckets of 500 ms (Sentinel's defaults), as the script. */
const BUCKET_MS_ARG = '500';
/** Most scopes (origins of an `'other'` rule) whose lease is kept; the oldest go first. */
const MAX_SCOPES = 1000;

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });
const PASS_NOW = Promise.resolve(PASS);

/**
 * A `reject` rule in the store: passes while the calls admitted by every instance in the
 * sliding window + acquireCount <= threshold. With `leaseTokens`, takes tokens in batches and
 * spends them in process. Either way, once the store says the window is full, calls are
 * refused here without a round trip until a bucket leaves the window (the earliest the window
 * can have room again), so blocking stays cheap under a flood.
 */
export class WindowLimiter implements ClusterLimiter {
  private readonly baseKey: string;
  private readonly leases = new Map<string, TokenLease>();

  constructor(
    private readonly spec: ClusterWindowSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = `${ctx.prefix}:w:${spec.key}`;
  }

  acquire(acquireCount: number, scope: string): Promise<ClusterDecision> {
    const lease = this.leaseOf(scope);
    const now = this.ctx.localNow();
    if (this.spec.leaseTokens > 0 && lease.take(acquireCount, now)) return PASS_NOW;
    if (lease.isFull(acquireCount, now)) return Promise.resolve(blocked(lease, now));
    if (this.spec.leaseTokens === 0) return this.ask(lease, scope, acquireCount, 0, now);
    return this.fetchLease(lease, scope, acquireCount);
  }

  tryAcquireLeased(acquireCount: number, scope: string): boolean | undefined {
    if (this.spec.leaseTokens === 0) return undefined;
    const lease = this.leaseOf(scope);
    const now = this.ctx.localNow();
    if (lease.take(acquireCount, now)) return true;
    if (lease.isFull(acquireCount, now)) return false;
    if (lease.fetching === undefined) void this.fetchLease(lease, scope, 0);
    return undefined;
  }

  /**
   * Takes tokens from the lease, refilling it when needed. Calls that find a refill in flight
   * wait for it and share its tokens instead of each asking Redis; if it could not reach Redis,
   * they fall back with it rather than each waiting out another timeout.
   */
  private async fetchLease(lease: TokenLease, scope: string, acquireCount: number): Promise<ClusterDecision> {
    let now = this.ctx.localNow();
    while (lease.fetching !== undefined) {
      const shared = await lease.fetching;
      if (shared.status === 'unavailable') return shared;
      now = this.ctx.localNow();
      if (lease.take(acquireCount, now)) return PASS;
      if (lease.isFull(acquireCount, now)) return blocked(lease, now);
    }
    const asking = this.ask(lease, scope, acquireCount, Math.max(this.spec.leaseTokens, acquireCount), now);
    lease.fetching = asking;
    try {
      return await asking;
    } finally {
      if (lease.fetching === asking) lease.fetching = undefined;
    }
  }

  /** One round trip: takes `acquireCount` (or, leasing, up to `lease` tokens) from the window. */
  private ask(lease: TokenLease, scope: string, acquireCount: number, leaseSize: number, sentAt: number): Promise<ClusterDecision> {
    const threshold = this.ctx.effectiveThreshold(this.spec.threshold, this.spec.thresholdType);
    const key = scope === '' ? this.baseKey : `${this.baseKey}:${scope}`;
    const args = [this.ctx.sharedNow(), String(threshold), String(acquireCount), String(leaseSize), BUCKET_MS_ARG];
    return this.ctx.gate.run(WINDOW_SCRIPT, [key], args, (reply, recoveredAfterMs) => {
      const passed = replyNumber(reply, 0) === 1;
      const msLeft = replyNumber(reply, 2);
      const room = replyNumber(reply, 3);
      if (!passed) {
        const retryAfterMs = replyNumber(reply, 1);
        lease.noteRoom(room, msLeft, sentAt);
        lease.retryAt = retryAfterMs < 0 ? Number.NaN : sentAt + retryAfterMs;
        return { status: 'block', retryAfterMs: retryAfterMs < 0 ? undefined : retryAfterMs, ...recovered(recoveredAfterMs) };
      }
      if (leaseSize > 0) lease.granted(replyNumber(reply, 1) - acquireCount, room, msLeft, sentAt);
      else lease.noteRoom(room, msLeft, sentAt);
      return recoveredAfterMs === undefined ? PASS : { status: 'pass', recoveredAfterMs };
    });
  }

  private leaseOf(scope: string): TokenLease {
    let lease = this.leases.get(scope);
    if (lease === undefined) {
      if (this.leases.size >= MAX_SCOPES) this.leases.delete(this.leases.keys().next().value!);
      lease = new TokenLease();
      this.leases.set(scope, lease);
    }
    return lease;
  }
}

function recovered(recoveredAfterMs: number | undefined): { recoveredAfterMs?: number } {
  return recoveredAfterMs === undefined ? {} : { recoveredAfterMs };
}

function blocked(lease: TokenLease, now: number): ClusterDecision {
  const retryAfterMs = Number.isNaN(lease.retryAt) ? undefined : Math.max(0, lease.retryAt - now);
  return { status: 'block', retryAfterMs };
}
