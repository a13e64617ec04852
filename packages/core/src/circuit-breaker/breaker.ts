import type { EntryAttachment } from '../kernel/rule-kind';
import type { Entry } from '../kernel/entry';
import { LeapArray } from '../kernel/leap-array';
import type { CircuitBreakerRule, CircuitBreakerStatus, CircuitState } from './circuit-breaker-rule';
import type { BreakerStrategy, WindowCounts } from './strategies';

/**
 * Told of every transition, after the state has changed. `value` is the ratio or count that
 * tripped a closed breaker, `1` when a half-open breaker reopens (a probe failed, as Sentinel
 * reports it), `undefined` otherwise.
 */
export type TransitionListener = (from: CircuitState, to: CircuitState, value: number | undefined) => void;

/**
 * What {@link BreakerStateMachine.tryPass} decides: `undefined` to let the call through,
 * a {@link BreakerProbe} to let it through as a probe (attach it to the entry), or the
 * `retryAfterMs` (> 0) of a refusal.
 */
export type PassDecision = BreakerProbe | number | undefined;

/**
 * A breaker's closed → open → half-open state machine (Sentinel's `AbstractCircuitBreaker`),
 * with its window. The {@link BreakerStrategy} only answers "trip?"; this class owns the rest.
 * Time is the `now` passed in: there are no timers, and every deadline is checked lazily.
 *
 * - **closed**: every call passes; each completion is recorded in the window, and once the
 *   window holds `minRequestAmount` calls the strategy may trip it open.
 * - **open**: every call is refused until `retryTimeoutMs` after opening.
 * - **halfOpen**: from then on, the next `halfOpenProbes` calls pass as probes and every other
 *   call is refused. All probes succeeding closes the breaker and empties its window; the first
 *   probe failing (an error, or for `slowRequestRatio` a slow call) reopens it for a fresh
 *   `retryTimeoutMs`. A probe refused by a later check fails at that moment; a probe still
 *   unfinished `retryTimeoutMs` after it started fails at that deadline (noticed on the next
 *   `tryPass()` or `status()`), so the breaker is never stuck half-open.
 *
 * Each opening starts a new generation; probes carry theirs, so calls let through before the
 * breaker opened, and probes already released, never decide a half-open period (their
 * completion is still recorded in the window).
 *
 * Internal: the public name `CircuitBreaker` belongs to the method decorator.
 */
export class BreakerStateMachine {
  private current: CircuitState = 'closed';
  /** Incremented on every opening; probes of older generations are ignored. */
  private generation = 0;
  /**
   * While open: when it opened. Deadlines are kept as their start, and time is compared as
   * elapsed (`now - openedAt < retryTimeoutMs`), never as `openedAt + retryTimeoutMs`: a
   * `retryTimeoutMs` below the clock's resolution (1e-310 ms at 10 s) vanishes in that sum, and
   * a breaker would then probe at the very instant it opened, every call a new probe.
   */
  private openedAt = 0;
  /** Probes let through in the current half-open period. */
  private admitted = 0;
  /** Probes of the current half-open period that succeeded. */
  private succeeded = 0;
  /** Probes of the current half-open period still running (at most `halfOpenProbes`). */
  private readonly inFlight: BreakerProbe[] = [];
  private readonly window: BreakerWindow;
  /** `maxAllowedRtMs`, or `Infinity` for strategies that do not count slow calls. */
  private readonly slowAfterMs: number;

  constructor(
    /** The rule in force, defaults resolved. */
    readonly rule: CircuitBreakerRule,
    private readonly strategy: BreakerStrategy,
    private readonly onTransition: TransitionListener,
  ) {
    this.window = new BreakerWindow(rule.bucketCount, rule.statIntervalMs);
    this.slowAfterMs = rule.maxAllowedRtMs ?? Number.POSITIVE_INFINITY;
  }

  /** The state as last decided (a probe's timeout is noticed by `tryPass()`/`status()`). */
  get state(): CircuitState {
    return this.current;
  }

  /** Decides whether a call may start at `now`. */
  tryPass(now: number): PassDecision {
    if (this.current === 'closed') return undefined;
    if (this.current === 'halfOpen') this.expireProbes(now);
    if (this.current === 'open') {
      const open = now - this.openedAt;
      if (open < this.rule.retryTimeoutMs) return this.rule.retryTimeoutMs - open;
      this.transition('halfOpen', undefined);
    }
    if (this.admitted < this.rule.halfOpenProbes) {
      const probe = new BreakerProbe(this, this.generation, now);
      this.admitted++;
      this.inFlight.push(probe);
      return probe;
    }
    return this.probeTimeLeft(now);
  }

  /**
   * Records a completed call (every call that passed, probe or not) and, while closed, asks
   * the strategy whether to trip.
   */
  onComplete(now: number, rtMs: number, error: boolean): void {
    const counts = this.window.record(now, rtMs > this.slowAfterMs, error, this.current === 'closed');
    if (counts === undefined || counts.total < this.rule.minRequestAmount) return;
    const value = this.strategy.trip(counts);
    if (value !== undefined) this.open(now, value);
  }

  /** A probe's call finished (after {@link BreakerStateMachine.onComplete} recorded it). */
  probeExited(probe: BreakerProbe, now: number, rtMs: number, error: boolean): void {
    if (!this.settle(probe)) return;
    if (error || rtMs > this.slowAfterMs) {
      this.open(now, 1);
      return;
    }
    this.succeeded++;
    if (this.succeeded < this.rule.halfOpenProbes) return;
    this.window.reset();
    this.transition('closed', undefined);
  }

  /**
   * A later check refused a probe's call: the probe failed, and the breaker reopens for a fresh
   * `retryTimeoutMs` from `now`. (Sentinel's #1638 fix reopens without moving the retry
   * deadline, so the very next call probes again; Floodgate waits, as for any failed probe.)
   */
  probeReleased(probe: BreakerProbe, now: number): void {
    if (this.settle(probe)) this.open(now, 1);
  }

  /**
   * A probe's call ran but says nothing of the resource (its outcome was discarded): the probe
   * is handed back, so the next call probes instead. The half-open period and its deadline
   * otherwise stand.
   */
  probeReturned(probe: BreakerProbe): void {
    if (this.settle(probe)) this.admitted--;
  }

  /**
   * The breaker's state at `now`. `retryAfterMs` is set while open (ms until probing, 0 once
   * due) and while half-open with every probe taken (as for a refused call).
   */
  status(now: number): CircuitBreakerStatus {
    if (this.current === 'halfOpen') this.expireProbes(now);
    const rule = this.rule;
    switch (this.current) {
      case 'closed':
        return { rule, state: 'closed' };
      case 'open':
        return { rule, state: 'open', retryAfterMs: Math.max(0, this.rule.retryTimeoutMs - (now - this.openedAt)) };
      case 'halfOpen':
        return this.admitted < rule.halfOpenProbes
          ? { rule, state: 'halfOpen' }
          : { rule, state: 'halfOpen', retryAfterMs: this.probeTimeLeft(now) };
    }
  }

  /** Removes a current probe from the running ones; `false` for a stale or unknown probe. */
  private settle(probe: BreakerProbe): boolean {
    if (probe.generation !== this.generation || this.current !== 'halfOpen') return false;
    const i = this.inFlight.indexOf(probe);
    if (i < 0) return false;
    this.inFlight.splice(i, 1);
    return true;
  }

  /**
   * Fails the half-open period when its oldest running probe has run `retryTimeoutMs`: the
   * breaker reopened at that deadline, so it may already be due to probe again.
   */
  private expireProbes(now: number): void {
    if (this.inFlight.length === 0) return;
    const oldest = this.oldestProbeStart();
    if (now - oldest >= this.rule.retryTimeoutMs) this.open(oldest + this.rule.retryTimeoutMs, 1);
  }

  /** When the oldest running probe started. Only called while one is running. */
  private oldestProbeStart(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.inFlight.length; i++) oldest = Math.min(oldest, this.inFlight[i]!.startedAt);
    return oldest;
  }

  /** Ms until the oldest running probe times out (> 0 once expired probes are released). */
  private probeTimeLeft(now: number): number {
    return this.rule.retryTimeoutMs - (now - this.oldestProbeStart());
  }

  /** Opens (from closed or half-open) at `at`, for `retryTimeoutMs`; releases every probe. */
  private open(at: number, value: number): void {
    this.generation++;
    this.openedAt = at;
    this.admitted = 0;
    this.succeeded = 0;
    this.inFlight.length = 0;
    this.transition('open', value);
  }

  private transition(to: CircuitState, value: number | undefined): void {
    const from = this.current;
    this.current = to;
    if (to === 'halfOpen') {
      this.admitted = 0;
      this.succeeded = 0;
    }
    this.onTransition(from, to, value);
  }
}

/**
 * One probe of a half-open breaker, attached to the entry it let through. It carries the
 * breaker's open-generation, so only probes of the current half-open period can close or
 * reopen the breaker: a probe that was released (timed out, or another probe failed) and
 * finishes later is ignored. Settles once.
 */
export class BreakerProbe implements EntryAttachment {
  private settled = false;

  constructor(
    private readonly machine: BreakerStateMachine,
    /** The breaker's open-generation when the probe was let through. */
    readonly generation: number,
    /** When the probe was let through (clock ms); it times out `retryTimeoutMs` later. */
    readonly startedAt: number,
  ) {}

  /** The probe's call finished: its outcome decides the half-open period. */
  exited(entry: Entry, now: number, rtMs: number): void {
    if (this.settled) return;
    this.settled = true;
    this.machine.probeExited(this, now, rtMs, entry.hasError);
  }

  /** The probe's call will not run (a later check refused it, or it was cancelled): it failed. */
  released(_entry: Entry, now: number): void {
    if (this.settled) return;
    this.settled = true;
    this.machine.probeReleased(this, now);
  }

  /** The probe's call ran but its outcome is not recorded (a client too slow sending): the probe goes to another call. */
  discarded(): void {
    if (this.settled) return;
    this.settled = true;
    this.machine.probeReturned(this);
  }
}

const TOTAL = 0;
const SLOW = 1;
const ERROR = 2;
const FIELDS = 3;

/**
 * One breaker's statistics: completed, slow and failed calls over `statIntervalMs`, in
 * `bucketCount` buckets of a {@link LeapArray} (one bucket, the default, is a tumbling window
 * as in Sentinel). Buckets rotate lazily against the `now` given; there are no timers.
 */
export class BreakerWindow {
  private readonly buckets: LeapArray;
  /** Reused by {@link BreakerWindow.counts}, so reading the window allocates nothing. */
  private readonly scratch = { total: 0, slow: 0, error: 0 };
  private readonly sums = new Float64Array(FIELDS);

  constructor(bucketCount: number, statIntervalMs: number) {
    this.buckets = new LeapArray(bucketCount, statIntervalMs, FIELDS);
  }

  /**
   * Records one completed call and, when `read`, returns the window's counts at `now` with it
   * (the window offset found once, for the write and the read: every completion of a closed
   * breaker does both). Each call counts once, whatever its `acquireCount` (as Sentinel).
   */
  record(now: number, slow: boolean, error: boolean, read = false): WindowCounts | undefined {
    const buckets = this.buckets;
    const data = buckets.data;
    const at = buckets.offset(now);
    data[at + TOTAL]! += 1;
    if (slow) data[at + SLOW]! += 1;
    if (error) data[at + ERROR]! += 1;
    return read ? this.summed(now) : undefined;
  }

  /**
   * The window's counts at `now`, in a scratch object reused by every read (read it before
   * the next call).
   */
  counts(now: number): WindowCounts {
    this.buckets.offset(now);
    return this.summed(now);
  }

  /** The counts at `now`, the buckets already rotated to `now`. */
  private summed(now: number): WindowCounts {
    const sums = this.sums;
    this.buckets.sumAllRotated(now, sums);
    const scratch = this.scratch;
    scratch.total = sums[TOTAL]!;
    scratch.slow = sums[SLOW]!;
    scratch.error = sums[ERROR]!;
    return scratch;
  }

  /** Empties the window (on closing, as Sentinel's `resetStat`, but every bucket as Go). */
  reset(): void {
    this.buckets.reset();
  }
}
