import type { Clock } from './clock';
import { isBlockError, TimeoutError, type BlockError } from './errors';
import type { Priority } from './priority';
import type { StatisticNode } from './statistic-node';

/** Told of every completed call that passed (a circuit breaker's checker). */
export interface ExitHook {
  onExit(entry: Entry, now: number, rtMs: number): void;
}

/**
 * Something a check took for one call and must give back: a hotspot token or concurrency
 * counter, a pacing slot, a breaker's probe. Attached with `Entry.attach`.
 *
 * A call that passed ends in two steps, which are one for most calls: its outcome is recorded
 * (`exited`, or `discarded`), then its work has settled (`freed`). A call answered by its timeout
 * has its outcome recorded at the timeout and is freed only when its function settles.
 */
export interface EntryAttachment {
  /**
   * The call passed every check and its outcome is now recorded (it returned, threw, or timed
   * out): a breaker's probe is decided here. Its work may still be running (see `freed`).
   */
  exited(entry: Entry, now: number, rtMs: number): void;
  /**
   * The call will not run: a later check refused it, it was cancelled, or it left a queue.
   * Give back what was taken, unless a later call has built on it.
   */
  released(entry: Entry, now: number): void;
  /**
   * The call's work has settled, after `exited` or `discarded` (at once, or later for a call
   * answered by its timeout): give back what bounds the work in flight (a concurrency counter).
   */
  freed?(entry: Entry, now: number): void;
  /**
   * The call ran but its outcome says nothing of the resource (its client was too slow sending
   * the request), so it is not recorded: a breaker's probe is handed back for another call.
   */
  discarded?(entry: Entry, now: number): void;
}
/**
 * What a call is to the operation it serves: its `'first'` attempt, a `'retry'` after a failed
 * attempt, or a `'hedge'` (a second attempt sent while the first is still running). Retry
 * budgets let first attempts earn the retries and hedges they allow.
 */
export type EntryAttempt = 'first' | 'retry' | 'hedge';

const NO_ARGS: readonly unknown[] = Object.freeze([]);
const NO_HOOKS: readonly ExitHook[] = Object.freeze([]);

const enum Phase {
  /** Being checked: not admitted yet. */
  Checking,
  /** Admitted: counted as passed and in flight. */
  Admitted,
  /** Concluded: its outcome is recorded (at its timeout), its work still runs and holds its concurrency. */
  Concluded,
  /** Exited: its completion was recorded and its concurrency given back. */
  Exited,
  /** Cancelled: given back before it ran, as if never admitted. */
  Cancelled,
}

/**
 * One guarded call that passed its checks. Report business errors with
 * {@link Entry.traceError} and always call {@link Entry.exit}, which records the response time
 * and releases concurrency. Exiting twice is harmless.
 *
 * A caller that admitted a call and then decides not to run it (another guard of the same
 * request refused it) calls {@link Entry.cancel} instead: everything the call took is given back.
 *
 * A call answered by its timeout ends in two steps: its outcome (the `TimeoutError`, its response
 * time) is recorded at the timeout, so circuit breakers see a hung dependency at once, and its
 * concurrency (of the resource, its origin, inbound calls, hotspot values) is held until its work
 * settles and `exit()` is called, so a concurrency limit bounds the work still running.
 *
 * The entry owns what its call takes and gives back: its counts in the statistics of its resource,
 * its origin and every inbound call (taken at admission, given back by `exit()` or `cancel()`, a
 * block counted instead when a check refuses it), and what the checks took for it (`attach`),
 * given back when it ends or is refused. The engine only runs the checks.
 */
export class Entry {
  /** The guarded resource. */
  readonly resource: string;
  /** How many tokens the call takes. @defaultValue 1 */
  readonly acquireCount: number;
  /** Who is calling (`''` when not given). */
  readonly origin: string;
  /** Whether the call is inbound (made by an HTTP adapter, or given `inbound: true`): system rules apply. */
  readonly inbound: boolean;
  /** The call's arguments, for hotspot rules. */
  readonly args: readonly unknown[];
  /** Named parameters, for hotspot rules with `paramKey`. */
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /** The values of the key sources hotspot rules with `key` read, by `keySourceId` (set by the HTTP adapters). */
  readonly keys: Readonly<Record<string, unknown>> | undefined;
  /** Whether the call is a first attempt, a retry or a hedge (retry budgets read it). @defaultValue 'first' */
  readonly attempt: EntryAttempt;
  /**
   * How much the call matters under overload: system rules and `adaptive` flow rules refuse
   * `'sheddable'` calls first and `'critical'` ones last, partitioned concurrency rules count it in
   * its priority's share, `prioritized` QPS rules let critical calls borrow from the next
   * window, and `prioritized` queues of concurrency rules serve them first. @defaultValue 'default'
   */
  readonly priority: Priority;

  /** @internal When the call started (clock ms): its response time runs from here to `exit()`. */
  startedAt: number;
  /** @internal When the call was counted as passed (clock ms), to undo that count on `cancel()`. */
  admittedAt = 0;
  /** @internal The resource's statistics; `undefined` when the resource is not tracked. */
  readonly node: StatisticNode | undefined;
  /** @internal The statistics of this origin on the resource, when origin rules need them. */
  readonly originNode: StatisticNode | undefined;
  /** @internal The statistics of every inbound call, for inbound entries while they are counted. */
  readonly inboundNode: StatisticNode | undefined;
  /** @internal Told of the call's completion (circuit breakers). */
  readonly exitHooks: readonly ExitHook[];
  /** @internal What checks took for this call, released on exit, refusal or cancellation. */
  attachments: EntryAttachment[] | undefined = undefined;

  private readonly clock: Clock;
  private phase = Phase.Checking;
  private errorValue: unknown = undefined;
  private errored = false;
  private pushback: number | undefined = undefined;
  private wouldBlockBy: BlockError | undefined = undefined;

  /**
   * @internal Made by the engine, for a call about to be checked: the statistics it will be
   * counted in (`node` and `originNode` of its resource, `inboundNode` of every inbound call; each
   * `undefined` where nothing counts it) and what is told of its completion.
   */
  constructor(
    clock: Clock,
    resource: string,
    now: number,
    acquireCount: number,
    origin: string,
    inbound: boolean,
    args: readonly unknown[] | undefined,
    params: Readonly<Record<string, unknown>> | undefined,
    keys: Readonly<Record<string, unknown>> | undefined,
    attempt: EntryAttempt,
    node: StatisticNode | undefined,
    originNode: StatisticNode | undefined,
    inboundNode: StatisticNode | undefined,
    exitHooks: readonly ExitHook[] | undefined,
    priority: Priority = 'default',
  ) {
    this.clock = clock;
    this.attempt = attempt;
    this.priority = priority;
    this.resource = resource;
    this.startedAt = now;
    this.acquireCount = acquireCount;
    this.origin = origin;
    this.inbound = inbound;
    this.args = args ?? NO_ARGS;
    this.params = params;
    this.keys = keys;
    this.node = node;
    this.originNode = originNode;
    this.inboundNode = inboundNode;
    this.exitHooks = exitHooks ?? NO_HOOKS;
  }

  /** When the call started (clock ms; after its queueing wait, if it waited). */
  get createdAt(): number {
    return this.startedAt;
  }

  /** Whether a business error was traced. */
  get hasError(): boolean {
    return this.errored;
  }

  /** The traced business error, if any. */
  get error(): unknown {
    return this.errorValue;
  }

  /** Whether the call has ended (`exit()` or `cancel()`): a call concluded at its timeout has not, until its work settles. */
  get exited(): boolean {
    return this.phase === Phase.Exited || this.phase === Phase.Cancelled;
  }

  /** Whether the call's outcome is recorded (`conclude()`, `exit()`, `cancel()`): it can no longer change. */
  get concluded(): boolean {
    return this.phase >= Phase.Concluded;
  }

  /**
   * The first refusal a rule in shadow (or beyond its `enforcePercent`) did not enforce on this
   * call, if any: the call passed, and would have been refused (HTTP adapters can say so in a
   * header, `wouldBlockHeader`).
   */
  get wouldBlock(): BlockError | undefined {
    return this.wouldBlockBy;
  }

  /** @internal A rule let this call through instead of refusing it with `error` (see {@link Entry.wouldBlock}). */
  noteWouldBlock(error: BlockError): void {
    this.wouldBlockBy ??= error;
  }

  /** The pause the dependency asked for, in ms, if {@link Entry.tracePushback} recorded one. */
  get pushbackMs(): number | undefined {
    return this.pushback;
  }

  /**
   * Records that the dependency refused this call and asked the caller to wait `retryAfterMs` ms
   * before calling again (an HTTP 429 or 503 answer with `Retry-After`). Pushback rules pause the
   * resource when the entry's outcome is recorded; adaptive throttling counts the call as not
   * accepted. The longest pause asked for wins. Ignored once the outcome is recorded.
   * @throws RangeError when `retryAfterMs` is not a finite number >= 0.
   */
  tracePushback(retryAfterMs: number): void {
    if (typeof retryAfterMs !== 'number' || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) {
      throw new RangeError(`retryAfterMs must be a finite number >= 0, got ${String(retryAfterMs)}`);
    }
    if (this.phase >= Phase.Concluded) return;
    this.pushback = this.pushback === undefined ? retryAfterMs : Math.max(this.pushback, retryAfterMs);
  }

  /**
   * Records a business error for this call; circuit breakers count it when the entry exits.
   * Block errors (from a nested guarded call) are not business errors and are ignored, as are
   * calls once its outcome is recorded (after `exit()`, `cancel()`, or its timeout).
   */
  traceError(error: unknown): void {
    if (this.phase >= Phase.Concluded || isBlockError(error)) return;
    this.errorValue = error;
    this.errored = true;
  }

  /** @internal Keeps what a check took, to release when the call ends or is refused. */
  attach(attachment: EntryAttachment): void {
    // The first as a one-element literal: `[]` then `push` would allocate room for 16.
    const attachments = this.attachments;
    if (attachments === undefined) this.attachments = [attachment];
    else attachments.push(attachment);
  }

  /**
   * @internal Every check passed at `now`: counts the call as passed and in flight in its
   * statistics; its response time runs from `now`. `cancel()` undoes exactly this.
   */
  admit(now: number): void {
    const count = this.acquireCount;
    const node = this.node;
    if (node !== undefined) {
      node.addPass(now, count);
      node.concurrency++;
    }
    const originNode = this.originNode;
    if (originNode !== undefined) {
      originNode.addPass(now, count);
      originNode.concurrency++;
    }
    const inboundNode = this.inboundNode;
    if (inboundNode !== undefined) {
      inboundNode.addPass(now, count);
      inboundNode.concurrency++;
    }
    this.phase = Phase.Admitted;
    this.admittedAt = now;
    this.startedAt = now;
  }

  /** @internal The admitted call waited out the slot its rules reserved: its response time runs from `now`. */
  waited(now: number): void {
    this.startedAt = now;
  }

  /**
   * @internal A check refused the call: counts the block in its statistics, and gives back what
   * the checks took. Before admission, at its check; after, when the call was admitted to wait
   * in a queue and its wait was refused (its deadline passed): its admission is undone first.
   */
  blocked(now: number): void {
    const count = this.acquireCount;
    if (this.phase === Phase.Admitted) this.cancel();
    else if (this.phase !== Phase.Checking) return;
    this.node?.addBlock(now, count);
    this.originNode?.addBlock(now, count);
    this.inboundNode?.addBlock(now, count);
    if (this.phase === Phase.Checking) this.refused(now);
  }

  /** @internal A check threw before the call was admitted: gives back what earlier checks took. */
  refused(now: number): void {
    this.phase = Phase.Cancelled;
    releaseAll(this, now);
  }

  /**
   * Ends the call: records its response time and releases what it holds. Idempotent. For a call
   * whose outcome was recorded at its timeout, only releases what it holds.
   */
  exit(): void {
    const phase = this.phase;
    if (phase !== Phase.Admitted && phase !== Phase.Concluded) return;
    this.phase = Phase.Exited;
    const now = this.clock.now();
    if (phase === Phase.Admitted) this.record(now);
    this.free(now);
  }

  /**
   * Records the call's outcome now (its response time, the error and pushback traced, what
   * circuit breakers, a half-open probe and other rules make of it), and keeps its concurrency held
   * until `exit()`: for a call answered by its timeout while its work goes on, or an HTTP response
   * whose headers came while its body is still being read. Does nothing unless admitted.
   */
  conclude(): void {
    if (this.phase !== Phase.Admitted) return;
    this.phase = Phase.Concluded;
    this.record(this.clock.now());
  }

  /**
   * @internal Ends the call's outcome without recording it: no response time, success or error,
   * nothing for circuit breakers, a half-open probe handed back. Its concurrency is held until
   * `exit()`. For a request whose client was still sending it at its timeout: the time was the
   * client's, not the resource's. Does nothing unless admitted.
   */
  discard(): void {
    if (this.phase !== Phase.Admitted) return;
    this.phase = Phase.Concluded;
    const attachments = this.attachments;
    if (attachments === undefined) return;
    const now = this.clock.now();
    for (let i = 0; i < attachments.length; i++) attachments[i]!.discarded?.(this, now);
  }

  /** Records the completion: statistics, exit hooks (circuit breakers), attachments (probes). */
  private record(now: number): void {
    const rtMs = now - this.startedAt;
    const count = this.acquireCount;
    const errored = this.errored;
    const timedOut = errored && this.errorValue instanceof TimeoutError;
    this.node?.addExit(now, count, rtMs, errored, timedOut);
    this.originNode?.addExit(now, count, rtMs, errored, timedOut);
    this.inboundNode?.addExit(now, count, rtMs, errored, timedOut);
    const hooks = this.exitHooks;
    for (let i = 0; i < hooks.length; i++) hooks[i]!.onExit(this, now, rtMs);
    const attachments = this.attachments;
    if (attachments !== undefined) for (let i = 0; i < attachments.length; i++) attachments[i]!.exited(this, now, rtMs);
  }

  /** Gives back the concurrency the call held while its work ran. */
  private free(now: number): void {
    const node = this.node;
    if (node !== undefined) node.concurrency--;
    const originNode = this.originNode;
    if (originNode !== undefined) originNode.concurrency--;
    const inboundNode = this.inboundNode;
    if (inboundNode !== undefined) inboundNode.concurrency--;
    const attachments = this.attachments;
    if (attachments !== undefined) for (let i = 0; i < attachments.length; i++) attachments[i]!.freed?.(this, now);
  }

  /**
   * Gives the call back before it ran, as if it had never been admitted: its pass in the current
   * window, its concurrency, its hotspot tokens and pacing slot are returned, and its completion
   * is never recorded. For callers that admitted a call and then refused it for another reason
   * (a later guard of the same request blocked it). A half-open breaker's probe counts as failed.
   * Does nothing once the entry has ended; for a call whose outcome was recorded at its timeout,
   * releases what it holds, as `exit()` does (it ran).
   */
  cancel(): void {
    if (this.phase === Phase.Concluded) return this.exit();
    if (this.phase !== Phase.Admitted) return;
    this.phase = Phase.Cancelled;
    const at = this.admittedAt;
    const count = this.acquireCount;
    const node = this.node;
    if (node !== undefined) {
      node.cancelPass(at, count);
      node.concurrency--;
    }
    const originNode = this.originNode;
    if (originNode !== undefined) {
      originNode.cancelPass(at, count);
      originNode.concurrency--;
    }
    const inboundNode = this.inboundNode;
    if (inboundNode !== undefined) {
      inboundNode.cancelPass(at, count);
      inboundNode.concurrency--;
    }
    releaseAll(this, this.clock.now());
  }
}

function releaseAll(entry: Entry, now: number): void {
  const attachments = entry.attachments;
  if (attachments !== undefined) for (let i = attachments.length - 1; i >= 0; i--) attachments[i]!.released(entry, now);
}
