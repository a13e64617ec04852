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
import { isBlockError, TimeoutError, type Entry, type Floodgate } from '@floodgate/core';
import { blockStatus, pushbackOf } from './grpc-status';
import { normalizeClientOptions, type ClientInterceptorOptions } from './grpc-options';
import { MethodPolicies, type MethodPolicy } from './method-policy';
import { PushbackTable } from './pushback';

/** What one interceptor shares with its calls. */
interface ClientGuard {
  readonly engine: Floodgate;
  readonly failure: readonly boolean[];
  readonly maxPushbackMs: number;
  readonly pushbacks: PushbackTable;
}

/** The call an interceptor stands in for (grpc-js does not export its interface by name). */
type InterceptingCallInterface = ReturnType<NextCall>;
type Listener = Partial<InterceptingListener>;
type Operation = (call: InterceptingCallInterface) => void;

const enum Phase {
  /** Not started. */
  Waiting,
  /** Waiting for a queued admission (`enter()`): the call is not made yet, what is sent is kept. */
  Entering,
  /** Admitted: the call is made, and holds its entry until its status arrives. */
  Admitted,
  /** Ended: its status was delivered. */
  Ended,
}

/**
 * A grpc-js client interceptor that guards each method of a server (`target`) as an outbound
 * resource named `'<target><method path>'` (`'localhost:50051/demo.Echo/Say'`): its flow rules
 * (QPS limits; concurrency limits, a bulkhead) and circuit breakers apply. A refused call is never
 * sent: it is answered locally with its block's status (`RESOURCE_EXHAUSTED` for a limit,
 * `UNAVAILABLE` for an open breaker), whose `ServiceError` carries the block error as `cause`
 * ({@link blockErrorOf}). An admitted call holds its entry, streams included, until its status
 * arrives; a status in `failureCodes` (by default `UNKNOWN`, `DEADLINE_EXCEEDED`, `INTERNAL`,
 * `UNAVAILABLE`) is a failure, and `DEADLINE_EXCEEDED` on a call with a deadline is traced as a
 * `TimeoutError` (a failure and a slow call): the call's deadline is its timeout. A queued call
 * (a throttling rule) waits at most until its deadline.
 *
 * The server's pushback is honoured (gRFC A6): after a status carrying `grpc-retry-pushback-ms`,
 * calls to that method are answered locally with a {@link PushbackError} (code `ERR_PUSHBACK`,
 * `retryAfterMs` the time left) until it has passed, on the engine's clock, for every client
 * interceptor of the engine.
 *
 * @throws RuleValidationError when an option or rule is invalid (naming it).
 * @example
 * const client = new EchoClient('localhost:50051', grpc.credentials.createInsecure(), {
 *   interceptors: [clientInterceptor({
 *     target: 'localhost:50051',
 *     eachMethod: { circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 } },
 *   })],
 * });
 */
export function clientInterceptor(options: ClientInterceptorOptions): Interceptor {
  const { engine, failure, maxPushbackMs, target, methods, eachMethod } = normalizeClientOptions(options);
  const policies = new MethodPolicies(engine, false, (path) => target + path, methods, eachMethod);
  const guard: ClientGuard = { engine, failure, maxPushbackMs, pushbacks: PushbackTable.of(engine) };
  return function floodgateClientInterceptor(callOptions: InterceptorOptions, nextCall: NextCall): InterceptingCall {
    const policy = policies.of(callOptions.method_definition.path);
    return new InterceptingCall(new GuardedCall(guard, policy, callOptions, nextCall));
  };
}

/**
 * One client call under guard: it stands in for the next call of the interceptor chain, which it
 * makes only once the call is admitted, and listens to it for the status that ends the entry.
 */
class GuardedCall implements InterceptingCallInterface, InterceptingListener {
  private phase = Phase.Waiting;
  private call: InterceptingCallInterface | undefined = undefined;
  private listener: Listener = {};
  private entry: Entry | undefined = undefined;
  /** When the deadline passes, in wall-clock ms (grpc-js deadlines are), and the time it allowed. */
  private deadlineMs = Infinity;
  private timeoutMs = 0;
  private controller: AbortController | undefined = undefined;
  private pending: Operation[] | undefined = undefined;

  constructor(
    private readonly guard: ClientGuard,
    private readonly policy: MethodPolicy,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {}

  start(metadata: Metadata, listener?: Listener): void {
    if (this.phase !== Phase.Waiting) return;
    this.listener = listener ?? {};
    const deadline = this.options.deadline;
    if (deadline !== undefined) {
      this.deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
      if (Number.isFinite(this.deadlineMs)) this.timeoutMs = Math.max(0, this.deadlineMs - Date.now());
    }
    const { engine, pushbacks } = this.guard;
    const resource = this.policy.resource;
    const paused = pushbacks.check(resource);
    if (paused !== undefined) return this.answer(blockStatus(paused));
    if (this.policy.queues) return this.enterQueued(metadata);
    const result = engine.tryEntry(resource);
    if (isBlockError(result)) return this.answer(blockStatus(result));
    this.open(result, metadata);
  }

  sendMessageWithContext(context: object, message: unknown): void {
    this.forward((call) => call.sendMessageWithContext(context, message));
  }

  sendMessage(message: unknown): void {
    this.forward((call) => call.sendMessage(message));
  }

  halfClose(): void {
    if (this.call !== undefined) this.call.halfClose();
    else this.forward((call) => call.halfClose());
  }

  startRead(): void {
    if (this.call !== undefined) this.call.startRead();
    else this.forward((call) => call.startRead());
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.call !== undefined) this.call.cancelWithStatus(code, details);
    else if (this.phase === Phase.Entering) {
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

  onReceiveMetadata(metadata: Metadata): void {
    this.listener.onReceiveMetadata?.(metadata);
  }

  onReceiveMessage(message: unknown): void {
    this.listener.onReceiveMessage?.(message);
  }

  /** The call's status: its entry ends (failed when its code is a failure), its pushback is kept, the caller is told. */
  onReceiveStatus(status: StatusObject): void {
    if (this.phase === Phase.Admitted) {
      this.phase = Phase.Ended;
      const entry = this.entry!;
      const { failure, maxPushbackMs, pushbacks } = this.guard;
      if (failure[status.code] === true) entry.traceError(this.failureOf(status));
      if (status.code !== Status.OK && maxPushbackMs > 0) {
        const pushbackMs = pushbackOf(status.metadata);
        if (pushbackMs !== undefined)
          pushbacks.record(entry.resource, status.code, Math.min(pushbackMs, maxPushbackMs));
      }
      entry.exit();
    }
    this.listener.onReceiveStatus?.(status);
  }

  /** What a failed status is traced as: a `TimeoutError` for a passed deadline (a slow call too), else the status. */
  private failureOf(status: StatusObject): unknown {
    return status.code === Status.DEADLINE_EXCEEDED && Number.isFinite(this.deadlineMs)
      ? new TimeoutError(this.policy.resource, this.timeoutMs)
      : status;
  }

  /** Makes the call, admitted, and sends what was kept while it queued. */
  private open(entry: Entry, metadata: Metadata): void {
    this.entry = entry;
    let call: InterceptingCallInterface;
    try {
      call = this.nextCall(this.options);
    } catch (error) {
      // No call was made (the channel is closed): the call never ran.
      this.phase = Phase.Ended;
      entry.cancel();
      throw error;
    }
    this.call = call;
    this.phase = Phase.Admitted;
    call.start(metadata, this);
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined) for (const operation of pending) operation(call);
  }

  /** Sends an operation to the call, keeps it while the call queues, drops it once the call was answered. */
  private forward(operation: Operation): void {
    if (this.call !== undefined) operation(this.call);
    else if (this.phase === Phase.Entering) (this.pending ??= []).push(operation);
  }

  /** Waits for a queued admission, at most until the call's deadline. */
  private enterQueued(metadata: Metadata): void {
    this.phase = Phase.Entering;
    this.pending = [];
    const controller = (this.controller = new AbortController());
    const { engine } = this.guard;
    const timer = Number.isFinite(this.deadlineMs) ? new AbortController() : undefined;
    if (timer !== undefined) {
      engine.clock.sleep(Math.max(0, this.deadlineMs - Date.now()), timer.signal).then(
        () => {
          if (this.phase !== Phase.Entering) return;
          controller.abort();
          this.answer({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded', metadata: new Metadata() });
        },
        () => {
          // Admitted, refused or cancelled first.
        },
      );
    }
    engine.enter(this.policy.resource, { signal: controller.signal }).then(
      (entry) => {
        timer?.abort();
        if (this.phase !== Phase.Entering) return entry.cancel();
        try {
          this.open(entry, metadata);
        } catch (error) {
          this.answer({ code: Status.UNAVAILABLE, details: String(error), metadata: new Metadata() });
        }
      },
      (error: unknown) => {
        timer?.abort();
        if (this.phase !== Phase.Entering) return;
        this.answer(
          isBlockError(error)
            ? blockStatus(error)
            : {
                code: Status.INTERNAL,
                details: `Floodgate could not admit the call: ${String(error)}`,
                metadata: new Metadata(),
              },
        );
      },
    );
  }

  /** Answers the call locally, on the next tick (as grpc-js answers a call it never sent): it never reaches the server. */
  private answer(status: StatusObject): void {
    this.phase = Phase.Ended;
    this.pending = undefined;
    process.nextTick(() => this.listener.onReceiveStatus?.(status));
  }
}
