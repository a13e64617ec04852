import {
  InterceptingCall,
  Metadata,
  status as Status,
  type Interceptor,
  type InterceptingListener,
  type InterceptorOptions,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import {
  isBlockError,
  TimeoutError,
  type BlockError,
  type Entry,
  type EntryAttempt,
  type Floodgate,
  type Priority,
} from '@floodgate/core';
import { KeepAlive, retryBudgetAllows, retryDelayMs, scheduleOn } from '@floodgate/core/http';
import { blockStatus, PUSHBACK_METADATA_KEY, pushbackOf } from './grpc-status';
import {
  normalizeClientOptions,
  type CallPriority,
  type ClientInterceptorOptions,
  type ResolvedGrpcRetry,
} from './grpc-options';
import { MethodPolicies, type MethodPolicy } from './method-policy';

/** What one interceptor shares with its calls. */
interface ClientGuard {
  readonly engine: Floodgate;
  readonly failure: readonly boolean[];
  readonly maxPushbackMs: number;
  readonly retry: ResolvedGrpcRetry | undefined;
  readonly priority: CallPriority;
  readonly keepAlive: KeepAlive;
}

/** The call an interceptor stands in for (grpc-js does not export its interface by name). */
type InterceptingCallInterface = ReturnType<NextCall>;
type Listener = Partial<InterceptingListener>;
type Operation = (call: InterceptingCallInterface) => void;

const enum Phase {
  /** Not started. */
  Waiting,
  /** Waiting for a queued admission (`enter()`): no attempt is out, what is sent is kept. */
  Entering,
  /** An attempt is out, and holds its entry until its status arrives. */
  Admitted,
  /** Waiting out the backoff before a retry: no attempt is out, what is sent is kept. */
  Backoff,
  /** Ended: its status was delivered. */
  Ended,
}

/**
 * A grpc-js client interceptor that guards each method of a server (`target`) as an outbound
 * resource named `'<target><method path>'` (`'localhost:50051/demo.Echo/Say'`): its flow rules
 * (QPS limits; concurrency limits, a bulkhead) and circuit breakers apply. A refused call is never
 * sent: it is answered locally with its block's status (`RESOURCE_EXHAUSTED` for a limit,
 * `UNAVAILABLE` for an open breaker or a pause), whose `ServiceError` carries the block error as
 * `cause` ({@link blockErrorOf}). An admitted call holds its entry, streams included, until its
 * status arrives; a status in `failureCodes` (by default `UNKNOWN`, `DEADLINE_EXCEEDED`,
 * `INTERNAL`, `UNAVAILABLE`) is a failure, and `DEADLINE_EXCEEDED` on a call with a deadline is
 * traced as a `TimeoutError` (a failure and a slow call): the call's deadline is its timeout. A
 * queued call (a throttling rule) waits at most until its deadline.
 *
 * The server's pushback is honoured (gRFC A6) through the engine's `pushback` rule kind, one rule
 * per method's resource (`maxPauseMs` = `maxPushbackMs`): after a failed status carrying
 * `grpc-retry-pushback-ms`, calls to that method are refused locally with an
 * `UpstreamPausedError` (code `ERR_UPSTREAM_PAUSED`, `UNAVAILABLE`, `retryAfterMs` the time left)
 * until it has passed, on the engine's clock. With `retry`, failed calls are retried within the
 * method's retry budget (see `GrpcRetryOptions`); `adaptiveThrottling` sheds calls to a
 * server that keeps rejecting. Every attempt's entry carries the call's `priority` (a function
 * of the call, or a metadata key the caller sets per call, which then reaches the server too).
 *
 * @throws RuleValidationError when an option or rule is invalid (naming it).
 * @example
 * const client = new EchoClient('localhost:50051', grpc.credentials.createInsecure(), {
 *   interceptors: [clientInterceptor({
 *     target: 'localhost:50051',
 *     priority: { metadata: 'x-priority' },
 *     eachMethod: { circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 } },
 *     retry: { maxRetries: 2 },
 *   })],
 * });
 */
export function clientInterceptor(options: ClientInterceptorOptions): Interceptor {
  const { engine, failure, maxPushbackMs, retry, priority, target, methods, eachMethod, outboundRules } =
    normalizeClientOptions(options);
  const policies = new MethodPolicies(engine, false, (path) => target + path, methods, eachMethod, outboundRules);
  const guard: ClientGuard = { engine, failure, maxPushbackMs, retry, priority, keepAlive: new KeepAlive() };
  return function floodgateClientInterceptor(callOptions: InterceptorOptions, nextCall: NextCall): InterceptingCall {
    const policy = policies.of(callOptions.method_definition.path);
    return new InterceptingCall(new GuardedCall(guard, policy, callOptions, nextCall));
  };
}

/**
 * One client call under guard: it stands in for the next call of the interceptor chain, which it
 * makes once per attempt the engine admits (`attempt: 'first'`, then `'retry'`), and listens to
 * each for the status that ends its entry. While the call may still be retried (retries on, a
 * unary or allowed server-streaming call, nothing of the answer delivered yet), what the caller
 * sends is kept, to be sent again to a retry.
 */
class GuardedCall implements InterceptingCallInterface, InterceptingListener {
  private phase = Phase.Waiting;
  private call: InterceptingCallInterface | undefined = undefined;
  private listener: Listener = {};
  private entry: Entry | undefined = undefined;
  private metadata: Metadata | undefined = undefined;
  /** The call's priority, read once when it starts: every attempt's entry carries it. */
  private priority: Priority = 'default';
  /** When the deadline passes, in wall-clock ms (grpc-js deadlines are), and the time it allowed. */
  private deadlineMs = Infinity;
  private timeoutMs = 0;
  /** Cancels the call's own wait (a queued admission, a backoff). */
  private controller: AbortController | undefined = undefined;
  /** What the caller sent that the current attempt has not had, or (while retriable) everything it sent. */
  private sent: Operation[] = [];
  /** Whether the call may still be retried: what it sent is kept, nothing of its answer was delivered. */
  private retriable: boolean;
  private retries = 0;
  /** The status of the last failed attempt, answered when no retry follows it. */
  private last: StatusObject | undefined = undefined;
  private cancelled = false;
  /** The attempt reported grpc-js's `null` unary message, held while the call may be retried. */
  private nullMessage = false;

  constructor(
    private readonly guard: ClientGuard,
    private readonly policy: MethodPolicy,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {
    const retry = guard.retry;
    const method = options.method_definition;
    this.retriable =
      retry !== undefined &&
      retry.maxRetries > 0 &&
      !method.requestStream &&
      (!method.responseStream || retry.serverStreaming);
  }

  start(metadata: Metadata, listener?: Listener): void {
    if (this.phase !== Phase.Waiting) return;
    this.listener = listener ?? {};
    this.metadata = this.retriable ? metadata.clone() : metadata;
    const deadline = this.options.deadline;
    if (deadline !== undefined) {
      this.deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
      if (Number.isFinite(this.deadlineMs)) this.timeoutMs = Math.max(0, this.deadlineMs - Date.now());
    }
    try {
      this.priority = this.guard.priority(metadata, this.options.method_definition.path);
    } catch (error) {
      // The priority function threw, or answered no priority: the call is never sent.
      return this.answer({ code: Status.INTERNAL, details: this.notAdmitted(error), metadata: new Metadata() });
    }
    this.admit('first', metadata);
  }

  sendMessageWithContext(context: object, message: unknown): void {
    this.forward((call) => call.sendMessageWithContext(context, message));
  }

  sendMessage(message: unknown): void {
    this.forward((call) => call.sendMessage(message));
  }

  halfClose(): void {
    this.forward((call) => call.halfClose());
  }

  startRead(): void {
    this.forward((call) => call.startRead());
  }

  cancelWithStatus(code: Status, details: string): void {
    this.cancelled = true;
    if (this.phase === Phase.Admitted) this.call!.cancelWithStatus(code, details);
    else if (this.phase === Phase.Entering || this.phase === Phase.Backoff) {
      this.controller!.abort();
      this.answer({ code, details, metadata: new Metadata() });
    } else this.phase = Phase.Ended;
  }

  getPeer(): string {
    return this.call?.getPeer() ?? 'unknown';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.call?.getAuthContext() ?? null;
  }

  /** Response metadata: the call is committed (gRFC A6), never retried from now on. */
  onReceiveMetadata(metadata: Metadata): void {
    this.commit();
    this.listener.onReceiveMetadata?.(metadata);
  }

  /**
   * A response message: the call is committed. grpc-js's unary calls report a `null` message
   * before a status that came without one; while the call may be retried, that one is held until
   * the status is known to be the call's last.
   */
  onReceiveMessage(message: unknown): void {
    if (message === null && this.retriable) {
      this.nullMessage = true;
      return;
    }
    this.commit();
    this.listener.onReceiveMessage?.(message);
  }

  /**
   * An attempt's status: its entry ends (failed when its code is a failure, with the server's
   * pushback traced for the pushback rule), then the call is retried after a backoff if it may be,
   * else the caller is told.
   */
  onReceiveStatus(status: StatusObject): void {
    if (this.phase === Phase.Admitted) {
      this.phase = Phase.Ended;
      const entry = this.entry!;
      if (this.guard.failure[status.code] === true) entry.traceError(this.failureOf(status));
      const pushbackMs = status.code === Status.OK ? undefined : pushbackOf(status.metadata);
      if (pushbackMs !== undefined && this.guard.maxPushbackMs > 0) entry.tracePushback(pushbackMs);
      entry.exit();
      const delay = this.retryDelay(status, pushbackMs);
      if (delay !== undefined) return this.backoff(status, delay);
    }
    if (this.nullMessage) {
      this.nullMessage = false;
      this.listener.onReceiveMessage?.(null);
    }
    this.listener.onReceiveStatus?.(status);
  }

  /** What a failed status is traced as: a `TimeoutError` for a passed deadline (a slow call too), else the status. */
  private failureOf(status: StatusObject): unknown {
    return status.code === Status.DEADLINE_EXCEEDED && Number.isFinite(this.deadlineMs)
      ? new TimeoutError(this.policy.resource, this.timeoutMs)
      : status;
  }

  /** Nothing sent is kept from now on: the call is never retried. */
  private commit(): void {
    if (!this.retriable) return;
    this.retriable = false;
    this.sent = [];
  }

  /**
   * The backoff before retrying a failed attempt, or `undefined` when it is not retried: not
   * retriable (committed, a streaming call, a cancel), its code not retried, its retries used up, a
   * negative or malformed pushback (gRFC A6: do not retry), a pushback over `maxPushbackMs`, a wait
   * that would pass the call's deadline, or a spent retry budget.
   */
  private retryDelay(status: StatusObject, pushbackMs: number | undefined): number | undefined {
    const retry = this.guard.retry;
    if (!this.retriable || this.cancelled || retry === undefined || retry.retryable[status.code] !== true)
      return undefined;
    if (this.retries >= retry.maxRetries) return undefined;
    if (pushbackMs === undefined && status.metadata.get(PUSHBACK_METADATA_KEY).length > 0) return undefined;
    const { engine, maxPushbackMs } = this.guard;
    const asked = maxPushbackMs > 0 ? pushbackMs : undefined;
    if (asked !== undefined && asked > maxPushbackMs) return undefined;
    const delay = retryDelayMs(this.retries + 1, retry, engine.random, asked);
    if (Date.now() + delay >= this.deadlineMs) return undefined;
    return retryBudgetAllows(engine, this.policy.resource) ? delay : undefined;
  }

  /** Waits out a backoff on the engine's clock, then enters a retry (unless the caller cancelled meanwhile). */
  private backoff(status: StatusObject, delay: number): void {
    this.phase = Phase.Backoff;
    this.nullMessage = false;
    this.last = status;
    this.call = undefined;
    const controller = (this.controller = new AbortController());
    const { engine, keepAlive } = this.guard;
    keepAlive.during(engine.clock.sleep(delay, controller.signal)).then(
      () => {
        if (this.phase !== Phase.Backoff) return;
        this.retries++;
        this.admit('retry', this.metadata!.clone());
      },
      () => {
        // Cancelled by the caller: answered by cancelWithStatus.
      },
    );
  }

  /** Asks the engine for an entry of `kind`, and makes the attempt it admits. */
  private admit(kind: EntryAttempt, metadata: Metadata): void {
    if (this.policy.queues) return this.enterQueued(kind, metadata);
    const result = this.guard.engine.tryEntry(this.policy.resource, { attempt: kind, priority: this.priority });
    if (isBlockError(result)) return this.refused(kind, result);
    this.open(result, metadata);
  }

  /** The engine refused an attempt: a first one is answered with its block, a retry with what the last attempt got. */
  private refused(kind: EntryAttempt, error: BlockError): void {
    this.answer(kind === 'first' || this.last === undefined ? blockStatus(error) : this.last);
  }

  /** Makes an admitted attempt, and sends it what the caller sent so far. */
  private open(entry: Entry, metadata: Metadata): void {
    this.entry = entry;
    let call: InterceptingCallInterface;
    try {
      call = this.nextCall(this.options);
    } catch (error) {
      // No call was made (the channel is closed): the attempt never ran.
      this.phase = Phase.Ended;
      entry.cancel();
      throw error;
    }
    this.call = call;
    this.phase = Phase.Admitted;
    call.start(metadata, this);
    const sent = this.sent;
    if (!this.retriable) this.sent = [];
    for (const operation of sent) operation(call);
  }

  /** Sends an operation to the attempt out, keeps it while no attempt is out or the call may be retried, drops it once the call ended. */
  private forward(operation: Operation): void {
    const out = this.phase === Phase.Admitted;
    if (out) operation(this.call!);
    else if (this.phase !== Phase.Entering && this.phase !== Phase.Backoff && this.phase !== Phase.Waiting) return;
    if (!out || this.retriable) this.sent.push(operation);
  }

  /** Waits for a queued admission, at most until the call's deadline. */
  private enterQueued(kind: EntryAttempt, metadata: Metadata): void {
    this.phase = Phase.Entering;
    const controller = (this.controller = new AbortController());
    const { engine, keepAlive } = this.guard;
    const cancelTimer = Number.isFinite(this.deadlineMs)
      ? scheduleOn(engine.clock, Math.max(0, this.deadlineMs - Date.now()), () => {
          if (this.phase !== Phase.Entering) return;
          controller.abort();
          this.answer({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded', metadata: new Metadata() });
        })
      : undefined;
    const options = { attempt: kind, priority: this.priority, signal: controller.signal };
    keepAlive.during(engine.enter(this.policy.resource, options)).then(
      (entry) => {
        cancelTimer?.();
        if (this.phase !== Phase.Entering) return entry.cancel();
        try {
          this.open(entry, metadata);
        } catch (error) {
          this.answer({ code: Status.UNAVAILABLE, details: String(error), metadata: new Metadata() });
        }
      },
      (error: unknown) => {
        cancelTimer?.();
        if (this.phase !== Phase.Entering) return;
        if (isBlockError(error)) return this.refused(kind, error);
        this.answer({ code: Status.INTERNAL, details: this.notAdmitted(error), metadata: new Metadata() });
      },
    );
  }

  /** The details of a call answered `INTERNAL` because something threw instead of admitting it. */
  private notAdmitted(error: unknown): string {
    return `Floodgate could not admit the call: ${String(error)}`;
  }

  /** Answers the call locally, on the next tick (as grpc-js answers a call it never sent). */
  private answer(status: StatusObject): void {
    this.phase = Phase.Ended;
    this.sent = [];
    process.nextTick(() => this.listener.onReceiveStatus?.(status));
  }
}
