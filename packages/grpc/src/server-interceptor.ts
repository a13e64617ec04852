import {
  ServerInterceptingCall,
  status as Status,
  type Metadata,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { isBlockError, type BlockError, type Entry, type Floodgate, type Priority } from '@floodgate/core';
import { blockStatus } from './grpc-status';
import { normalizeServerOptions, type CallPriority, type ServerInterceptorOptions } from './grpc-options';
import { MethodPolicies, type MethodPolicy } from './method-policy';

/** The entry options reused by every synchronous admission of an interceptor (`tryEntry` keeps none of them). */
interface Scratch {
  readonly inbound: true;
  origin: string;
  priority: Priority;
  params: Record<string, unknown> | undefined;
}

/** What one interceptor shares with its calls. */
interface ServerGuard {
  readonly engine: Floodgate;
  readonly failure: readonly boolean[];
  readonly origin: string | undefined;
  readonly priority: CallPriority;
  readonly scratch: Scratch;
}

/** A status a handler sends (grpc-js does not export its type by name). */
type PartialStatus = Parameters<ServerInterceptingCallInterface['sendStatus']>[0];

const enum Phase {
  /** Not entered yet: waiting for the metadata, or for the first message when the rules read it. */
  Waiting,
  /** Waiting for a queued admission (`enter()`). */
  Entering,
  /** Admitted: the entry is held until the call ends. */
  Admitted,
  /** Ended: the status was sent, the call was cancelled, or a block answered it. */
  Ended,
}

/**
 * A grpc-js server interceptor that guards every method the server serves, each as its own
 * inbound resource named by its path (`'/demo.Echo/Say'`), so system rules apply too. A call is
 * entered when its metadata arrives, or at its first message when a hotspot rule reads a message
 * field; a refused call is answered at once with its block's status (`RESOURCE_EXHAUSTED`,
 * `UNAVAILABLE` or `PERMISSION_DENIED`, with `grpc-retry-pushback-ms` where the wait is known)
 * and its handler never sees it. An admitted call holds its entry, streams included, until it
 * ends, exactly once: when its status is sent, or when it is cancelled (by the client, its
 * deadline or a lost connection). A status in `failureCodes` is a failure for circuit breakers;
 * a call cut short is not (its deadline is the client's). A call's entry carries its `priority`
 * (a function of the call, or a metadata key the client sets, capped by `max`), for the rules
 * that shed load by priority.
 *
 * List it first in `interceptors` for it to see calls before other interceptors do (interceptors
 * listed before it see its answers).
 *
 * @throws RuleValidationError when an option or rule is invalid (naming it).
 * @example
 * const server = new grpc.Server({
 *   interceptors: [serverInterceptor({
 *     origin: 'x-app',
 *     priority: { metadata: 'x-priority' },
 *     methods: { '/demo.Echo/Say': { rateLimit: { threshold: 100 } } },
 *     eachMethod: { circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 } },
 *   })],
 * });
 */
export function serverInterceptor(options?: ServerInterceptorOptions): ServerInterceptor {
  const { engine, failure, origin, priority, methods, eachMethod } = normalizeServerOptions(options);
  const policies = new MethodPolicies(engine, true, (path) => path, methods, eachMethod);
  const scratch: Scratch = { inbound: true, origin: '', priority: 'default', params: undefined };
  const guard: ServerGuard = { engine, failure, origin, priority, scratch };
  return function floodgateServerInterceptor(method, call) {
    const state = new ServerCall(guard, policies.of(method.path), call);
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => state.onMetadata(metadata, pass),
          onReceiveMessage: (message, pass) => state.onMessage(message, pass),
          onReceiveHalfClose: (pass) => state.onHalfClose(pass),
          onCancel: () => state.end(),
        }),
      sendStatus: (status, pass) => {
        state.onStatus(status);
        pass(status);
      },
    });
  };
}

/** One call's Floodgate state: its phase, its entry, and the metadata kept for a message-time admission. */
class ServerCall {
  private phase = Phase.Waiting;
  private entry: Entry | undefined = undefined;
  private metadata: Metadata | undefined = undefined;
  private controller: AbortController | undefined = undefined;

  constructor(
    private readonly guard: ServerGuard,
    private readonly policy: MethodPolicy,
    private readonly call: ServerInterceptingCallInterface,
  ) {}

  onMetadata(metadata: Metadata, pass: (metadata: Metadata) => void): void {
    if (this.policy.params.readsMessage) {
      this.metadata = metadata;
      pass(metadata);
    } else this.admit(metadata, undefined, pass, metadata);
  }

  onMessage(message: unknown, pass: (message: unknown) => void): void {
    if (this.phase === Phase.Waiting) this.admit(this.metadata!, message, pass, message);
    else if (this.phase !== Phase.Ended) pass(message);
  }

  onHalfClose(pass: () => void): void {
    if (this.phase === Phase.Waiting) this.admit(this.metadata!, undefined, pass, undefined);
    else if (this.phase !== Phase.Ended) pass();
  }

  /** The handler sends the call's status: it ends, failed when its code is one of `failureCodes`. */
  onStatus(status: PartialStatus): void {
    const entry = this.entry;
    if (this.phase === Phase.Admitted && entry !== undefined && this.guard.failure[status.code] === true)
      entry.traceError(status);
    this.end();
  }

  /** Ends the call, once: a queued admission is abandoned, an entry exits. */
  end(): void {
    const phase = this.phase;
    if (phase === Phase.Ended) return;
    this.phase = Phase.Ended;
    // Only a queued admission listens (aborting a signal costs microseconds in Node).
    if (phase === Phase.Entering) this.controller?.abort();
    this.entry?.exit();
  }

  /** Enters the method's resource, then passes `value` on (`pass`), or answers the block. */
  private admit<T>(metadata: Metadata, message: unknown, pass: (value: T) => void, value: T): void {
    const { engine, scratch, origin } = this.guard;
    const policy = this.policy;
    const originValue = origin === undefined ? '' : metadata.get(origin)[0];
    const callOrigin = typeof originValue === 'string' ? originValue : '';
    const params = policy.params.read(metadata, message);
    let priority: Priority;
    try {
      // A server method's resource is its path. A priority function that throws, or answers no
      // priority, fails the call as an engine error would.
      priority = this.guard.priority(metadata, policy.resource);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (policy.queues) {
      this.admitQueued(callOrigin, priority, params, () => pass(value));
      return;
    }
    scratch.origin = callOrigin;
    scratch.priority = priority;
    scratch.params = params;
    let result: Entry | BlockError;
    try {
      result = engine.tryEntry(policy.resource, scratch);
    } catch (error) {
      this.fail(error);
      return;
    } finally {
      scratch.params = undefined;
    }
    if (isBlockError(result)) this.block(result);
    else {
      this.entry = result;
      this.phase = Phase.Admitted;
      pass(value);
    }
  }

  private admitQueued(
    origin: string,
    priority: Priority,
    params: Record<string, unknown> | undefined,
    proceed: () => void,
  ): void {
    this.phase = Phase.Entering;
    const controller = (this.controller = new AbortController());
    const options = { inbound: true, origin, priority, params, signal: controller.signal } as const;
    this.guard.engine.enter(this.policy.resource, options).then(
      (entry) => {
        if (this.phase !== Phase.Entering) return entry.cancel();
        this.entry = entry;
        this.phase = Phase.Admitted;
        proceed();
      },
      (error: unknown) => {
        if (this.phase !== Phase.Entering) return;
        if (isBlockError(error)) this.block(error);
        else this.fail(error);
      },
    );
  }

  /**
   * The engine threw instead of deciding (a check's bug, a resource name past the engine's
   * bound), or the `priority` function did (or answered no priority): the call is answered
   * `INTERNAL`, as a handler's uncaught error is, and the error is a process warning (thrown
   * here, it would end the process from grpc-js's stream handler).
   */
  private fail(error: unknown): void {
    this.phase = Phase.Ended;
    this.call.sendStatus({ code: Status.INTERNAL, details: 'Internal server error' });
    process.emitWarning(`Floodgate could not admit a call to ${this.policy.resource}: ${String(error)}`, {
      code: 'FLOODGATE_GRPC_ADMISSION_ERROR',
    });
  }

  /** Answers a refused call with its block's status; its handler never sees it. */
  private block(error: BlockError): void {
    this.phase = Phase.Ended;
    this.call.sendStatus(blockStatus(error));
  }
}
