import type {
  ClusterBreaker,
  ClusterBreakerDecision,
  ClusterBreakerListener,
  ClusterBreakerSpec,
  ClusterBreakerView,
  ClusterProbeOutcome,
  ClusterUnavailable,
} from '@floodgate/core/cluster';
import { CIRCUIT_STATES, type BreakerChannel, type ChannelMember } from './breaker-channel';
import { replyNumber, ruleKey, type LimiterContext } from './limiter-context';
import { BREAKER_SCRIPT } from './scripts/breaker-script';
import type { ReplyHandler } from './store-gate';

const STRATEGIES = { slowRequestRatio: 's', errorRatio: 'r', errorCount: 'c' } as const;
const OUTCOMES = { failure: 0, success: 1, unused: 2 } as const;
const PASS: ClusterBreakerDecision = Object.freeze({ status: 'pass' });
/** Completions per script call: a longer run leaves at once, so one script call never loops for long. */
const MAX_RUN = 1024;
/** Calls asking to pass per script call: a full batch leaves at once. */
const MAX_ASKS = 16;
/** The hash outlives a day without calls, or four times the rule's window and retry timeout. */
const MIN_TTL_MS = 86_400_000;

/** A probe lease the store granted: its half-open period, its slot and this caller's token. */
class Lease {
  constructor(
    readonly version: number,
    readonly slot: number,
    readonly token: string,
  ) {}
}

/** A call waiting for the batch's answer: an acquire (a decision of its own) or a read. */
interface Waiter {
  readonly asks: boolean;
  resolve(decision: ClusterBreakerDecision): void;
}

/** Reads the state part of a breaker script's reply. */
export function readView(reply: unknown): ClusterBreakerView {
  const state = CIRCUIT_STATES[replyNumber(reply, 1)];
  if (state === undefined) throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
  const value = String((reply as unknown[])[3]);
  return {
    version: replyNumber(reply, 0),
    state,
    retryAfterMs: replyNumber(reply, 2),
    value: value === '' ? undefined : Number(value),
  };
}

/**
 * A shared circuit breaker on Redis ({@link BREAKER_SCRIPT} on one hash per rule): what this
 * instance does to it in one tick (completions, calls asking to pass, probes' outcomes, a read)
 * goes to Redis as one script call, in order, and its answer (the breaker's state) is told to
 * the listener; transitions made by other instances arrive through the backend's
 * {@link BreakerChannel}. What it learned stays fresh for `refreshMs` (on the backend's local
 * clock): no call asks Redis meanwhile unless the breaker is due to probe.
 */
export class RedisBreaker implements ClusterBreaker, ChannelMember {
  /** The breaker's hash in Redis. */
  readonly key: string;
  private readonly config: readonly string[];
  private ops: string[] = [];
  private waiters: Waiter[] = [];
  /** Completions not yet made an operation. */
  private run = '';
  private scheduled = false;
  private reading = false;
  private listener: ClusterBreakerListener | undefined;
  private heardAt = Number.NEGATIVE_INFINITY;
  private tokens = 0;
  private readonly flushNow = (): void => this.flush();

  constructor(
    spec: ClusterBreakerSpec,
    private readonly ctx: LimiterContext,
    private readonly channel: BreakerChannel,
    private readonly refreshMs: number,
    /** This backend's part of every lease token, so two instances never hold the same token. */
    private readonly tokenPrefix: string,
  ) {
    this.key = ruleKey(ctx.prefix, 'b', spec.key);
    const ttlMs = Math.max(MIN_TTL_MS, 4 * (spec.statIntervalMs + spec.retryTimeoutMs));
    this.config = [
      STRATEGIES[spec.strategy],
      String(spec.threshold),
      String(spec.minRequestAmount),
      String(spec.statIntervalMs),
      String(spec.bucketCount),
      String(spec.retryTimeoutMs),
      String(spec.halfOpenProbes),
      channel.name,
      String(ttlMs),
    ];
  }

  watch(listener: ClusterBreakerListener): () => void {
    this.listener = listener;
    this.channel.add(this);
    return () => {
      if (this.listener !== listener) return;
      this.listener = undefined;
      this.channel.remove(this);
    };
  }

  fresh(): boolean {
    return this.ctx.localNow() - this.heardAt < this.refreshMs;
  }

  refresh(): void {
    if (this.reading) return;
    this.reading = true;
    this.waiters.push({ asks: false, resolve: () => undefined });
    this.schedule();
  }

  acquire(): Promise<ClusterBreakerDecision> {
    return new Promise((resolve) => {
      this.closeRun();
      this.ops.push(`a${this.tokenPrefix}${this.tokens++}`);
      this.waiters.push({ asks: true, resolve });
      if (this.waiters.length >= MAX_ASKS) this.flush();
      else this.schedule();
    });
  }

  record(slow: boolean, error: boolean): void {
    this.run += error ? (slow ? 'x' : 'e') : slow ? 's' : 'o';
    if (this.run.length >= MAX_RUN) this.flush();
    else this.schedule();
  }

  settle(lease: unknown, outcome: ClusterProbeOutcome): void {
    if (!(lease instanceof Lease)) return;
    this.closeRun();
    this.ops.push(`s${OUTCOMES[outcome]}${lease.version}:${lease.slot}:${lease.token}`);
    this.schedule();
  }

  /** A change published by an instance (this one included). */
  heard(view: ClusterBreakerView): void {
    this.heardAt = this.ctx.localNow();
    this.listener?.learned(view, undefined, true);
  }

  /** The subscription was lost for a while: messages may have been missed, so what was learned is stale. */
  stale(): void {
    this.heardAt = Number.NEGATIVE_INFINITY;
  }

  private closeRun(): void {
    if (this.run === '') return;
    this.ops.push(`c${this.run}`);
    this.run = '';
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(this.flushNow);
  }

  private flush(): void {
    this.scheduled = false;
    this.closeRun();
    if (this.ops.length === 0 && this.waiters.length === 0) return;
    const ops = this.ops;
    const waiters = this.waiters;
    this.ops = [];
    this.waiters = [];
    this.reading = false;
    const args = [this.ctx.sharedNow(), ...this.config, ...ops];
    if (waiters.length > 0 && !waiters.some((w) => w.asks)) args.push('r');
    this.ctx.gate.run(BREAKER_SCRIPT, [this.key], args, new SentOps(this, ops, waiters));
  }

  /** @internal The answer to a batch: the state for the listener, then each call's decision. */
  answered(
    reply: unknown,
    ops: readonly string[],
    waiters: readonly Waiter[],
    recoveredAfterMs: number | undefined,
  ): void {
    const view = readView(reply);
    // Every decision is read before anyone is told: a reply that cannot be read fails whole.
    const decisions: ClusterBreakerDecision[] = [];
    let at = 4;
    for (const op of ops) {
      if (op.charCodeAt(0) !== 97 /* a */) continue;
      const kind = replyNumber(reply, at);
      const detail = String((reply as unknown[])[at + 1]);
      at += 2;
      if (kind === 0) decisions.push(PASS);
      else if (kind === 1) {
        const [version, slot] = detail.split(':');
        decisions.push({ status: 'probe', lease: new Lease(Number(version), Number(slot), op.slice(1)) });
      } else decisions.push({ status: 'block', retryAfterMs: Number(detail) });
    }
    this.heardAt = this.ctx.localNow();
    this.listener?.learned(view, recoveredAfterMs);
    let next = 0;
    for (const waiter of waiters) waiter.resolve(waiter.asks ? decisions[next++]! : PASS);
  }

  /** @internal A batch could not reach Redis: waiting calls fall back; with none, the listener hears it. */
  failed(decision: ClusterUnavailable, waiters: readonly Waiter[]): void {
    if (!waiters.some((w) => w.asks)) this.listener?.unavailable(decision);
    for (const waiter of waiters) waiter.resolve(decision);
  }
}

/** One batch in flight. */
class SentOps implements ReplyHandler {
  constructor(
    private readonly breaker: RedisBreaker,
    private readonly ops: readonly string[],
    private readonly waiters: readonly Waiter[],
  ) {}

  replied(reply: unknown, recoveredAfterMs: number | undefined): void {
    this.breaker.answered(reply, this.ops, this.waiters, recoveredAfterMs);
  }

  unavailable(decision: ClusterUnavailable): void {
    this.breaker.failed(decision, this.waiters);
  }
}
