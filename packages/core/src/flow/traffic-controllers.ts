import type { EntryAttachment } from '../kernel/entry';
import type { Priority } from '../kernel/priority';
import type { StatisticNode } from '../kernel/statistic-node';

/** {@link TrafficController.tryPass}: the call passes now. */
export const PASS = 0;
/** {@link TrafficController.tryPass}: the call is refused. */
export const BLOCKED = -1;

/**
 * Decides one flow rule: can this call pass, and after what wait? One per rule, holding that
 * rule's state (tokens, pacing). Sentinel's `TrafficShapingController`s, all in this file:
 * {@link DefaultController} (reject), {@link WarmUpController}, {@link ThrottlingController}
 * and {@link WarmUpThrottlingController}, with the pacing and warm-up machinery they share;
 * `adaptive` concurrency, its own idea, is in `adaptive-limit.ts`.
 */
export interface TrafficController {
  /**
   * {@link PASS}, {@link BLOCKED}, or a wait in ms (> 0) after which the call passes; a wait is
   * returned only when `canWait`, and its slot is then reserved. `priority` is the call's
   * (read by the controllers that shed or lend by priority).
   */
  tryPass(node: StatisticNode, acquireCount: number, now: number, canWait: boolean, priority: Priority): number;
  /** After {@link BLOCKED}: ms until a retry could pass, or `undefined` when not known. */
  retryAfterMs(node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number | undefined;
  /**
   * Pacing and borrowing controllers: gives back the slot due at `slotAt`, taken at `takenAt` for
   * `acquireCount` tokens (a call that passed or queued and then did not run), if it can still
   * be given back.
   */
  refund?(slotAt: number, takenAt: number, acquireCount: number): void;
  /** Controllers fed by completions (adaptive concurrency): attached to every call that passes, told when it ends. */
  readonly completions?: EntryAttachment;
}

/**
 * `reject`: a call passes while the counted value + acquireCount <= threshold, where the
 * counted value is the passes in the second-level window (QPS) or the calls in flight
 * (concurrency). Sentinel's DefaultController; its priority occupation is `BorrowingWindow`.
 */
export class DefaultController implements TrafficController {
  constructor(
    private readonly threshold: number,
    private readonly concurrency: boolean,
  ) {}

  tryPass(node: StatisticNode, acquireCount: number, now: number): number {
    const current = this.concurrency ? node.concurrency : node.passQps(now);
    return current + acquireCount <= this.threshold ? PASS : BLOCKED;
  }

  retryAfterMs(node: StatisticNode, _acquireCount: number, now: number): number | undefined {
    return this.concurrency ? undefined : node.msUntilPassesDrop(now);
  }
}

/**
 * Even pacing (Sentinel's leaky bucket in ThrottlingController): each pass costs `costMs`;
 * a call passes at once when the previous pass is at least `costMs` ago, else it takes the
 * next free slot if that is at most `maxWaitMs` away.
 */
export class Pacer {
  private latestPassedTime = Number.NEGATIVE_INFINITY;
  /** `latestPassedTime` before the latest slot was taken, while that slot can be given back. */
  private beforeLastSlot: number | undefined;

  /** {@link PASS}, {@link BLOCKED} or the reserved wait in ms (only when `canWait`). */
  take(costMs: number, now: number, maxWaitMs: number, canWait: boolean): number {
    const expected = this.latestPassedTime + costMs;
    if (expected <= now) {
      this.beforeLastSlot = this.latestPassedTime;
      this.latestPassedTime = now;
      return PASS;
    }
    const wait = expected - now;
    // `!(wait <= maxWaitMs)`: a wait that is not a number refuses (`NaN > maxWaitMs` is false).
    if (!canWait || !(wait <= maxWaitMs)) return BLOCKED;
    this.beforeLastSlot = this.latestPassedTime;
    this.latestPassedTime = expected;
    return wait;
  }

  /** How long a call costing `costMs` would wait at `now`. */
  waitMs(costMs: number, now: number): number {
    return Math.max(0, this.latestPassedTime + costMs - now);
  }

  /**
   * Gives back the slot due at `slotAt`, if it is still the latest one taken: the next caller
   * then takes it. A slot with later ones behind it stays a gap, so no slot is ever given to
   * two callers.
   */
  refund(slotAt: number): void {
    if (this.beforeLastSlot === undefined || !sameTime(this.latestPassedTime, slotAt)) return;
    this.latestPassedTime = this.beforeLastSlot;
    this.beforeLastSlot = undefined;
  }
}

/** Equal up to float rounding (`slotAt` is recomputed as now + wait). */
function sameTime(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
}

/**
 * `throttle`: calls are spaced `1000 * acquireCount / threshold` ms apart (fractional, so
 * thresholds above 1000/s still pace); a call that would wait longer than `maxQueueingTimeMs`
 * is blocked. Sentinel's ThrottlingController (RateLimiterController).
 */
export class ThrottlingController implements TrafficController {
  private readonly pacer = new Pacer();

  constructor(
    private readonly threshold: number,
    private readonly maxQueueingTimeMs: number,
  ) {}

  tryPass(_node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number {
    if (acquireCount <= 0) return PASS;
    if (this.threshold <= 0) return BLOCKED;
    return this.pacer.take(this.costMs(acquireCount), now, this.maxQueueingTimeMs, canWait);
  }

  retryAfterMs(_node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number | undefined {
    if (this.threshold <= 0) return undefined;
    const wait = this.pacer.waitMs(this.costMs(acquireCount), now);
    return canWait ? Math.max(0, wait - this.maxQueueingTimeMs) : wait;
  }

  refund(slotAt: number): void {
    this.pacer.refund(slotAt);
  }

  private costMs(acquireCount: number): number {
    return (1000 * acquireCount) / this.threshold;
  }
}

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/** The least double greater than `x` (Java's `Math.nextUp`), for finite `x >= 0`. */
export function nextUp(x: number): number {
  if (!(x >= 0) || x === Number.POSITIVE_INFINITY) return x;
  if (x === 0) return Number.MIN_VALUE;
  f64[0] = x;
  u64[0]! += 1n;
  return f64[0];
}

/**
 * The token bucket behind warm-up (Sentinel's WarmUpController, after Guava's
 * SmoothWarmingUp). A cold system holds `maxToken` tokens and admits about
 * `threshold / coldFactor` per second; steady traffic drains the bucket below `warningToken`,
 * where the full threshold applies. Tokens are synced at most once per clock second.
 */
export class WarmUpTokens {
  /** Below this many stored tokens, the full threshold applies. */
  readonly warningToken: number;
  /** The tokens of a cold system. */
  readonly maxToken: number;
  /** How fast the admitted rate falls as tokens rise above `warningToken`. */
  readonly slope: number;
  private storedTokens = 0;
  private lastFilledTime = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly threshold: number,
    warmUpPeriodMs: number,
    private readonly coldFactor: number,
  ) {
    const warmUpSec = warmUpPeriodMs / 1000;
    this.warningToken = Math.floor(Math.floor(warmUpSec * threshold) / (coldFactor - 1));
    this.maxToken = this.warningToken + Math.floor((2 * warmUpSec * threshold) / (1 + coldFactor));
    // Read only above `warningToken`; a bucket without room above it has no slope (not Infinity).
    this.slope =
      this.maxToken > this.warningToken ? (coldFactor - 1) / threshold / (this.maxToken - this.warningToken) : 0;
  }

  /** The tokens in the bucket now (after the last sync). */
  get stored(): number {
    return this.storedTokens;
  }

  /**
   * Syncs the bucket with the previous second's passes and returns the rate (calls per
   * second) admitted now: never more than `threshold`. (Sentinel's `Math.nextUp` of the warning
   * rate can exceed it by an ulp at the warning line, which admitted a third call under a
   * threshold of 2.9999999999999996.)
   */
  rate(previousPassQps: number, now: number): number {
    this.sync(Math.floor(previousPassQps), now);
    if (this.storedTokens >= this.warningToken && this.maxToken > this.warningToken) {
      const aboveToken = this.storedTokens - this.warningToken;
      return Math.min(this.threshold, nextUp(1 / (aboveToken * this.slope + 1 / this.threshold)));
    }
    return this.threshold;
  }

  private sync(previousPassQps: number, now: number): void {
    const second = now - (now % 1000);
    if (second <= this.lastFilledTime) return;
    const filled = this.coolDown(second, previousPassQps);
    this.storedTokens = Math.max(0, filled - previousPassQps);
    this.lastFilledTime = second;
  }

  private coolDown(second: number, previousPassQps: number): number {
    const old = this.storedTokens;
    // Never synced: the system is cold, its bucket full (a refill over an infinite time).
    const refill = (): number =>
      this.lastFilledTime === Number.NEGATIVE_INFINITY
        ? this.maxToken
        : Math.floor(old + ((second - this.lastFilledTime) * this.threshold) / 1000);
    let next = old;
    if (old < this.warningToken) next = refill();
    else if (old > this.warningToken && previousPassQps < Math.floor(Math.floor(this.threshold) / this.coldFactor))
      next = refill();
    return Math.min(next, this.maxToken);
  }
}

/**
 * `warmUp`: the admitted rate climbs from about `threshold / coldFactor` to `threshold` over
 * `warmUpPeriodMs` of steady traffic, and falls back as the system cools. A call passes while
 * the window's passes + acquireCount <= the current rate. Sentinel's WarmUpController.
 */
export class WarmUpController implements TrafficController {
  /** The warm-up token bucket (exposed for tests and metrics). */
  readonly tokens: WarmUpTokens;

  constructor(threshold: number, warmUpPeriodMs: number, coldFactor: number) {
    this.tokens = new WarmUpTokens(threshold, warmUpPeriodMs, coldFactor);
  }

  tryPass(node: StatisticNode, acquireCount: number, now: number): number {
    const rate = this.tokens.rate(node.previousPassQps(now), now);
    return node.passQps(now) + acquireCount <= rate ? PASS : BLOCKED;
  }

  retryAfterMs(node: StatisticNode, _acquireCount: number, now: number): number | undefined {
    return node.msUntilPassesDrop(now);
  }
}

/**
 * `warmUpThrottle`: even pacing (as `throttle`) at the warm-up rate (as `warmUp`): each call
 * costs `1000 * acquireCount / rate` ms. Sentinel's WarmUpRateLimiterController.
 */
export class WarmUpThrottlingController implements TrafficController {
  /** The warm-up token bucket (exposed for tests and metrics). */
  readonly tokens: WarmUpTokens;
  private readonly pacer = new Pacer();
  private lastCostMs = 0;

  constructor(
    private readonly threshold: number,
    warmUpPeriodMs: number,
    coldFactor: number,
    private readonly maxQueueingTimeMs: number,
  ) {
    this.tokens = new WarmUpTokens(threshold, warmUpPeriodMs, coldFactor);
  }

  tryPass(node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number {
    if (acquireCount <= 0) return PASS;
    if (this.threshold <= 0) return BLOCKED;
    const rate = this.tokens.rate(node.previousPassQps(now), now);
    this.lastCostMs = (1000 * acquireCount) / rate;
    return this.pacer.take(this.lastCostMs, now, this.maxQueueingTimeMs, canWait);
  }

  retryAfterMs(_node: StatisticNode, _acquireCount: number, now: number, canWait: boolean): number | undefined {
    if (this.threshold <= 0) return undefined;
    const wait = this.pacer.waitMs(this.lastCostMs, now);
    return canWait ? Math.max(0, wait - this.maxQueueingTimeMs) : wait;
  }

  refund(slotAt: number): void {
    this.pacer.refund(slotAt);
  }
}
