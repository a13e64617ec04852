import type { IncomingHttpHeaders } from 'node:http';
import { Entry, TimeoutError, type EntryAttempt, type Floodgate } from '@floodgate/core';
import { retryBudgetAllows, retryDelayMs, type KeepAlive } from '@floodgate/core/http';
import { RT_BUCKET_BOUNDS_MS } from '@floodgate/core/metrics';
import type { Dispatcher } from 'undici';
import type { Deadline, Deadlines } from './deadlines';
import { hasHeader, isReplayable, isRetryableError, retryAfterMs } from './http-facts';
import { OUTBOUND_DEFAULTS, type HedgeOptions, type ResolvedRetry } from './outbound-options';
import type { Guarded } from './outbound-resources';

type Handler = Dispatcher.DispatchHandler;
type Controller = Dispatcher.DispatchController;

/** What every call of one guard shares. */
export interface CallContext {
  readonly fg: Floodgate;
  /** The next dispatch of the composed dispatcher. */
  readonly dispatch: Dispatcher.Dispatch;
  /** The wall clock, only to read a `Retry-After` date of an answer without a `Date` header. */
  readonly wallNow: () => number;
  /** Keeps the process alive while calls wait with no socket of theirs open. */
  readonly keepAlive: KeepAlive;
  /** The attempts' timeouts and hedge delays. */
  readonly deadlines: Deadlines;
}

/** Most bytes of a failed answer kept to answer with if no retry can be sent; a longer one is answered at once. */
const REPLAY_LIMIT = 64 * 1024;

/** An answer's status that `isFailure` counts as a failure, as the error traced on its entry. */
export class UpstreamStatusError extends Error {
  readonly code = 'ERR_UPSTREAM_STATUS' as const;
  override readonly name = 'UpstreamStatusError';
  constructor(readonly status: number) {
    super(`The upstream answered ${status}`);
  }
}

/** The reason a losing hedge (or first attempt) is aborted. */
class HedgeLost extends Error {
  override readonly name = 'HedgeLost';
  constructor() {
    super('Another attempt of the call answered first');
  }
}

/** What a failed attempt left to answer the caller with, when no further attempt is sent. */
type Failure =
  | { readonly error: Error }
  | {
      readonly error?: undefined;
      readonly status: number;
      readonly headers: IncomingHttpHeaders;
      readonly statusMessage: string | undefined;
      readonly chunks: readonly Buffer[];
      readonly trailers: IncomingHttpHeaders;
    };

/**
 * One guarded call: one dispatch of the caller's, sent as one or more attempts, each an engine
 * entry of its own (`attempt: 'first' | 'retry' | 'hedge'`). The caller's handler sees one
 * exchange, through one controller, whatever attempts it took:
 *
 * - an attempt the engine refuses is not sent: a refused first attempt answers the caller with the
 *   block error; a refused retry answers with what the last attempt got; a refused hedge changes
 *   nothing;
 * - an answer whose status is retried, or an error worth another attempt, while the retry budget
 *   has a retry left (read first, so that no caller waits a backoff only to be refused), is held
 *   (its body up to 64 KiB) while a retry waits out its backoff (full jitter, at least the
 *   `Retry-After` asked for) through the engine's clock, and is answered if the retry is refused;
 * - any other answer wins: it is passed on as it streams, any other attempt is aborted, and its
 *   entry concludes at the headers (or at the body's end, `measure: 'body'`) and exits when the
 *   body is read to the end, fails, or is cancelled by the caller (or by the garbage collector,
 *   through fetch's own registry);
 * - timeouts and hedge delays are deadlines of the guard's (no timer per call), cancelled when no
 *   longer needed; a backoff is a clock wait of the call's, cancelled if the caller aborts.
 */
export class GuardedCall {
  private readonly controller: CallController;
  private readonly resource: string;
  private readonly retry: ResolvedRetry | undefined;
  private readonly attempts = new Set<Attempt>();
  private winner: Attempt | undefined;
  private last: Failure | undefined;
  private retries = 0;
  private hedged = false;
  /** Why the caller aborted, once it did. */
  abortReason: Error | undefined;
  /** The caller's handler has had its last callback. */
  private settled = false;
  /** Cancels the call's own waits (a backoff, a queued admission); made only when the call waits. */
  private stopper: AbortController | undefined;
  /** The hedge's deadline, while it may still be sent. */
  private hedgeAt: Deadline | undefined;

  constructor(
    private readonly ctx: CallContext,
    private readonly guarded: Guarded,
    private readonly opts: Dispatcher.DispatchOptions,
    private readonly downstream: Handler,
  ) {
    this.controller = new CallController(this);
    this.resource = guarded.resource;
    const retry = guarded.policy.retry;
    const method = opts.method.toUpperCase();
    const idempotent =
      retry !== undefined &&
      (retry.methods.has(method) ||
        (retry.idempotencyKeyHeader !== undefined && hasHeader(opts.headers, retry.idempotencyKeyHeader)));
    this.retry = idempotent && isReplayable(opts.body) ? retry : undefined;
  }

  /** Starts the call: its first attempt, if the engine admits it. */
  start(): boolean {
    this.downstream.onRequestStart?.(this.controller, {});
    this.admit('first');
    return true;
  }

  /** The winning attempt's controller, for pause, resume and the raw headers. */
  get upstream(): Controller | undefined {
    return this.winner?.upstream;
  }

  // ------------------------------------------------------------ attempts

  /** Asks the engine for an entry of `kind`, and sends the attempt it admits. */
  private admit(kind: EntryAttempt): void {
    const { fg } = this.ctx;
    if (fg.resourceInfo(this.resource).mayWait) {
      this.ctx.keepAlive.during(fg.enter(this.resource, { attempt: kind, signal: this.stopSignal() })).then(
        (entry) => (this.settled || this.abortReason !== undefined ? entry.cancel() : this.send(entry, kind)),
        (error: unknown) => this.refused(kind, error as Error),
      );
      return;
    }
    const admitted = fg.tryEntry(this.resource, { attempt: kind });
    if (admitted instanceof Entry) this.send(admitted, kind);
    else this.refused(kind, admitted);
  }

  private send(entry: Entry, kind: EntryAttempt): void {
    const attempt = new Attempt(this, entry);
    this.attempts.add(attempt);
    const timeoutMs = this.guarded.policy.timeoutMs;
    if (timeoutMs !== undefined) attempt.timeOutAfter(this.ctx.deadlines, timeoutMs, this.resource);
    if (kind === 'first' && this.retry !== undefined && this.guarded.policy.hedge !== undefined) this.hedgeLater();
    try {
      this.ctx.dispatch(this.opts, attempt);
    } catch (error) {
      this.failed(attempt, error as Error);
    }
  }

  /** The engine refused an attempt: a first one fails the call, a retry answers what came before. */
  private refused(kind: EntryAttempt, error: Error): void {
    if (this.settled || this.abortReason !== undefined) return;
    if (kind === 'hedge') return;
    if (kind === 'first' || this.last === undefined) this.finish({ error });
    else this.finish(this.last);
  }

  /** After the hedge delay, a second attempt while no attempt has answered. */
  private hedgeLater(): void {
    const delay = hedgeDelayMs(this.ctx.fg, this.resource, this.guarded.policy.hedge!);
    this.hedgeAt = this.ctx.deadlines.after(delay, () => {
      this.hedgeAt = undefined;
      if (this.settled || this.hedged || this.winner !== undefined || this.attempts.size !== 1) return;
      if ([...this.attempts][0]!.answered) return;
      this.hedged = true;
      this.admit('hedge');
    });
  }

  /** The signal that cancels the call's own waits. */
  private stopSignal(): AbortSignal {
    return (this.stopper ??= new AbortController()).signal;
  }

  /** No wait of the call is needed any more. */
  private stopWaits(): void {
    this.hedgeAt?.cancel();
    this.hedgeAt = undefined;
    this.stopper?.abort();
  }

  // ------------------------------------------------------------ what attempts report

  /** An attempt has its response headers. */
  answered(attempt: Attempt, status: number, headers: IncomingHttpHeaders, statusMessage: string | undefined): void {
    const policy = this.guarded.policy;
    const entry = attempt.entry;
    const wait = retryAfterMs(headers, this.ctx.wallNow);
    if ((status === 429 || status === 503) && wait !== undefined) entry.tracePushback(wait);
    if (policy.isFailure(status)) entry.traceError(new UpstreamStatusError(status));
    const retry = this.retry;
    if (
      retry !== undefined &&
      retry.statusCodes.has(status) &&
      (wait === undefined || wait <= retry.maxRetryAfterMs) &&
      (this.attempts.size > 1 || (this.retries < retry.maxRetries && this.budgetLeft()))
    ) {
      // Held: a retry (or the other attempt) may answer instead.
      entry.conclude();
      attempt.hold(status, headers, statusMessage, wait);
      return;
    }
    this.win(attempt);
    if (policy.measure === 'headers') entry.conclude();
    this.downstream.onResponseStart?.(this.controller, status, headers, statusMessage);
  }

  /** An attempt's held answer outgrew what can be kept: it is answered as it is, if nothing answered yet. */
  overflowed(attempt: Attempt): void {
    if (this.winner !== undefined) {
      this.drop(attempt, new HedgeLost());
      return;
    }
    this.win(attempt);
    const held = attempt.held!;
    this.downstream.onResponseStart?.(this.controller, held.status, held.headers, held.statusMessage);
    for (const chunk of held.chunks) this.downstream.onResponseData?.(this.controller, chunk);
    attempt.held = undefined;
  }

  /** A chunk of the winning attempt's body. */
  data(chunk: Buffer): void {
    this.downstream.onResponseData?.(this.controller, chunk);
  }

  /** An attempt's answer ended: the winner's is passed on; a held one may be retried. */
  ended(attempt: Attempt, trailers: IncomingHttpHeaders): void {
    this.attempts.delete(attempt);
    attempt.entry.exit();
    const held = attempt.held;
    if (held === undefined) {
      this.settled = true;
      this.stopWaits();
      this.downstream.onResponseEnd?.(this.controller, trailers);
      return;
    }
    this.last = { ...held, trailers };
    this.next(held.retryAfterMs);
  }

  /** An attempt failed: before its headers, while held, or while its body was passed on. */
  failed(attempt: Attempt, error: Error): void {
    if (!this.attempts.delete(attempt)) return;
    attempt.stopTimer();
    const entry = attempt.entry;
    if (attempt === this.winner) {
      if (this.abortReason === undefined && this.guarded.policy.measure === 'body') entry.traceError(error);
      entry.exit();
      this.finish({ error: this.abortReason ?? error });
      return;
    }
    if (attempt.held === undefined) entry.traceError(error);
    entry.exit();
    if (this.abortReason !== undefined) return;
    this.last = { error };
    this.next(undefined);
  }

  // ------------------------------------------------------------ decisions

  /** After a failed attempt: wait for the other one, retry after a backoff, or answer what came. */
  private next(retryAfter: number | undefined): void {
    if (this.settled || this.winner !== undefined || this.attempts.size > 0) return;
    const last = this.last!;
    const retry = this.retry;
    if (
      retry === undefined ||
      this.retries >= retry.maxRetries ||
      (last.error !== undefined && !isRetryableError(last.error)) ||
      !this.budgetLeft()
    ) {
      this.finish(last);
      return;
    }
    this.retries++;
    const delay = retryDelayMs(this.retries, retry, this.ctx.fg.random, retryAfter);
    this.ctx.keepAlive.during(this.ctx.fg.clock.sleep(delay, this.stopSignal())).then(
      () => this.admit('retry'),
      () => undefined,
    );
  }

  /** Whether the retry budget allows a retry now (a refused one is counted and announced). */
  private budgetLeft(): boolean {
    return retryBudgetAllows(this.ctx.fg, this.resource);
  }

  /** `attempt` answers the call: every other attempt is aborted. */
  private win(attempt: Attempt): void {
    this.winner = attempt;
    attempt.stopTimer();
    this.hedgeAt?.cancel();
    this.hedgeAt = undefined;
    if (this.controller.paused) attempt.upstream?.pause();
    for (const other of [...this.attempts]) if (other !== attempt) this.drop(other, new HedgeLost());
  }

  /** Aborts an attempt the call no longer needs; its entry exits as it is (it was sent: it counts). */
  private drop(attempt: Attempt, reason: Error): void {
    if (!this.attempts.delete(attempt)) return;
    attempt.abandon(reason);
    attempt.entry.exit();
  }

  /** Gives the caller its last callback: an error, or a held answer replayed whole. */
  private finish(outcome: Failure): void {
    if (this.settled) return;
    this.settled = true;
    this.stopWaits();
    const down = this.downstream;
    if (outcome.error !== undefined) {
      down.onResponseError?.(this.controller, outcome.error);
      return;
    }
    down.onResponseStart?.(this.controller, outcome.status, outcome.headers, outcome.statusMessage);
    for (const chunk of outcome.chunks) down.onResponseData?.(this.controller, chunk);
    down.onResponseEnd?.(this.controller, outcome.trailers);
  }

  /** The caller aborted (a signal, a cancelled body, a body collected unread). */
  abort(reason: Error): void {
    if (this.settled || this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.stopWaits();
    const winner = this.winner;
    for (const attempt of [...this.attempts]) {
      if (attempt === winner) continue;
      this.drop(attempt, reason);
    }
    if (winner !== undefined && this.attempts.has(winner)) {
      // Its error comes back through `failed`, which ends the call.
      winner.upstream?.abort(reason);
      return;
    }
    queueMicrotask(() => this.finish({ error: reason }));
  }
}

/** One attempt of a call: the handler undici's dispatch calls, and its entry. */
class Attempt implements Handler {
  upstream: Controller | undefined;
  /** Why the call dropped it; from then on, what undici reports of it is ignored. */
  private abandoned: Error | undefined;
  /** Whether its response headers came. */
  answered = false;
  /** A failed answer kept while a retry may answer instead. */
  held:
    | {
        status: number;
        headers: IncomingHttpHeaders;
        statusMessage: string | undefined;
        chunks: Buffer[];
        size: number;
        retryAfterMs: number | undefined;
      }
    | undefined;
  private timer: Deadline | undefined;

  constructor(
    private readonly call: GuardedCall,
    readonly entry: Entry,
  ) {}

  /** Aborts the attempt with a `TimeoutError` if it has no response headers within `timeoutMs`. */
  timeOutAfter(deadlines: Deadlines, timeoutMs: number, resource: string): void {
    this.timer = deadlines.after(timeoutMs, () => {
      this.timer = undefined;
      const error = new TimeoutError(resource, timeoutMs);
      this.entry.traceError(error);
      this.call.failed(this, error);
      this.abandon(error);
    });
  }

  stopTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Keeps a failed answer while a retry may answer instead. */
  hold(
    status: number,
    headers: IncomingHttpHeaders,
    statusMessage: string | undefined,
    wait: number | undefined,
  ): void {
    this.held = { status, headers, statusMessage, chunks: [], size: 0, retryAfterMs: wait };
  }

  /** Stops caring about the attempt, and aborts it (at once, or as soon as undici starts it). */
  abandon(reason: Error): void {
    if (this.abandoned !== undefined) return;
    this.abandoned = reason;
    this.stopTimer();
    this.upstream?.abort(reason);
  }

  onRequestStart(controller: Controller): void {
    this.upstream = controller;
    if (this.abandoned !== undefined) controller.abort(this.abandoned);
  }

  onResponseStart(
    _controller: Controller,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (this.abandoned !== undefined || statusCode < 200) return;
    this.answered = true;
    this.stopTimer();
    this.call.answered(this, statusCode, headers, statusMessage);
  }

  onResponseData(_controller: Controller, chunk: Buffer): void {
    if (this.abandoned !== undefined) return;
    const held = this.held;
    if (held === undefined) {
      this.call.data(chunk);
      return;
    }
    held.chunks.push(chunk);
    held.size += chunk.length;
    if (held.size > REPLAY_LIMIT) this.call.overflowed(this);
  }

  onResponseEnd(_controller: Controller, trailers: IncomingHttpHeaders): void {
    if (this.abandoned !== undefined) return;
    this.call.ended(this, trailers);
  }

  onResponseError(_controller: Controller, error: Error): void {
    if (this.abandoned !== undefined) return;
    this.stopTimer();
    this.call.failed(this, error);
  }
}

/** The controller the caller's handler gets: one for the whole call, whatever attempt answers. */
class CallController implements Controller {
  private pausedByCaller = false;

  constructor(private readonly call: GuardedCall) {}

  get aborted(): boolean {
    return this.call.abortReason !== undefined;
  }

  get paused(): boolean {
    return this.pausedByCaller;
  }

  get reason(): Error | null {
    return this.call.abortReason ?? null;
  }

  get rawHeaders(): Controller['rawHeaders'] {
    return this.call.upstream?.rawHeaders ?? null;
  }

  get rawTrailers(): Controller['rawTrailers'] {
    return this.call.upstream?.rawTrailers ?? null;
  }

  abort(reason: Error): void {
    this.call.abort(reason);
  }

  pause(): void {
    this.pausedByCaller = true;
    this.call.upstream?.pause();
  }

  resume(): void {
    this.pausedByCaller = false;
    this.call.upstream?.resume();
  }
}

/**
 * The hedge delay: `delayMs`, or the bound of the engine's response-time histogram (1-2-5 ms
 * buckets) that `percentile` of the resource's completed calls are within, once it has 20 of them.
 */
export function hedgeDelayMs(fg: Floodgate, resource: string, hedge: HedgeOptions): number {
  if (hedge.percentile === undefined) return hedge.delayMs;
  const buckets = fg.totals(resource)?.rtBuckets;
  if (buckets === undefined) return hedge.delayMs;
  let count = 0;
  for (const n of buckets) count += n;
  if (count < OUTBOUND_DEFAULTS.hedgeSamples) return hedge.delayMs;
  const wanted = hedge.percentile * count;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i]!;
    if (seen >= wanted) return RT_BUCKET_BOUNDS_MS[i] ?? RT_BUCKET_BOUNDS_MS[RT_BUCKET_BOUNDS_MS.length - 1]!;
  }
  return hedge.delayMs;
}
