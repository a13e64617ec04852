import { performance } from 'node:perf_hooks';
import type { ClusterUnavailable } from '@floodgate/core/cluster';
import type { DeadlineQueue, Expirable } from './deadline-queue';
import type { RedisCommander } from './redis-commander';
import { isNoScript, type RedisScript } from './redis-script';

/** Who waits for one script call: told its reply, or why there is none. */
export interface ReplyHandler {
  /**
   * The store answered. `recoveredAfterMs` is set when this reply ends an outage. May throw on a
   * reply it cannot read: the call is then `unavailable` with reason `'error'`.
   */
  replied(reply: unknown, recoveredAfterMs: number | undefined): void;
  /** The store could not answer (in time), or was not asked. */
  unavailable(decision: ClusterUnavailable): void;
}

const BREAKER_OPEN: ClusterUnavailable = Object.freeze({ status: 'unavailable', reason: 'breakerOpen' });
const NOT_READY: ClusterUnavailable = Object.freeze({ status: 'unavailable', reason: 'notReady' });
const TIMEOUT: ClusterUnavailable = Object.freeze({ status: 'unavailable', reason: 'timeout' });

/** One script call in flight, settled by its reply, its error or its deadline. */
class PendingCall implements Expirable {
  settled = false;
  readonly deadline: number;

  constructor(
    private readonly gate: StoreGate,
    private readonly handler: ReplyHandler,
    timeoutMs: number,
    /** The script, until it was sent in full once (after NOSCRIPT). */
    private script: RedisScript | undefined,
    /** The EVALSHA sent. */
    private readonly command: readonly string[],
  ) {
    this.deadline = performance.now() + timeoutMs;
  }

  replied(reply: unknown): void {
    if (this.settled) return; // too late: the call already fell back
    this.settled = true;
    const recoveredAfterMs = this.gate.succeeded();
    try {
      this.handler.replied(reply, recoveredAfterMs);
    } catch (error) {
      this.handler.unavailable({ status: 'unavailable', reason: 'error', error });
    }
  }

  failed(error: unknown): void {
    if (this.settled) return;
    if (this.script !== undefined && isNoScript(error)) {
      // Redis lost its script cache (restart, SCRIPT FLUSH, failover to a replica that never
      // loaded it): send the script in full, once.
      const full = this.script.inFull(this.command);
      this.script = undefined;
      this.gate.send(full, this);
      return;
    }
    this.settled = true;
    this.gate.failed();
    this.handler.unavailable({ status: 'unavailable', reason: 'error', error });
  }

  expire(): void {
    this.settled = true;
    this.gate.failed();
    this.handler.unavailable(TIMEOUT);
  }
}

/**
 * Every call to the store goes through here: the breaker decides whether to ask at all, a
 * connection that is not ready (or a server found incompatible) answers at once, and a call
 * waits at most `timeoutMs` (real time) for its reply. It never throws: every failure reaches
 * the handler as an `'unavailable'` decision.
 */
export class StoreGate {
  private closed = false;
  /** Set when the server cannot run Floodgate's scripts (too old): every call fails with it. */
  private incompatible: Error | undefined;

  constructor(
    private readonly commander: RedisCommander,
    private readonly breaker: BackendBreaker,
    private readonly deadlines: DeadlineQueue,
    private readonly timeoutMs: number,
    private readonly localNow: () => number,
  ) {}

  /** Runs `script` on `keys` within the timeout; `handler` hears how it went. */
  run(script: RedisScript, keys: readonly string[], args: readonly string[], handler: ReplyHandler): void {
    if (this.closed) return handler.unavailable(NOT_READY);
    if (this.incompatible !== undefined)
      return handler.unavailable({ status: 'unavailable', reason: 'error', error: this.incompatible });
    if (this.breaker.admit(this.localNow()) === Admission.Skip) return handler.unavailable(BREAKER_OPEN);
    if (!this.commander.isReady()) {
      this.failed();
      return handler.unavailable(NOT_READY);
    }
    const command = script.command(keys, args);
    const call = new PendingCall(this, handler, this.timeoutMs, script, command);
    this.deadlines.add(call);
    this.send(command, call);
  }

  /** @internal Sends `command` for `call`. */
  send(command: readonly string[], call: PendingCall): void {
    this.commander.send(command).then(
      (reply) => call.replied(reply),
      (error: unknown) => call.failed(error),
    );
  }

  /** Refuses every later call with `error` (the server cannot run the scripts). */
  refuse(error: Error): void {
    this.incompatible = error;
  }

  /** Stops asking the store: later calls fall back at once (`'notReady'`); pending ones time out now. */
  close(): void {
    this.closed = true;
    this.deadlines.expireAll();
  }

  /** @internal A call got its reply; how long the store was down, if this ends an outage. */
  succeeded(): number | undefined {
    return this.breaker.success(this.localNow());
  }

  /** @internal A call failed or timed out. */
  failed(): void {
    this.breaker.failure(this.localNow());
  }
}

/** What {@link BackendBreaker.admit} allows for one call. */
const enum Admission {
  /** The store is up: ask it. */
  Call,
  /** The cool-down is over: this call probes the store; the others skip it meanwhile. */
  Probe,
  /** The store is down: do not ask it, fall back at once. */
  Skip,
}

/**
 * The breaker on the store (one per backend, shared by every rule): after `failureThreshold`
 * failures in a row (timeouts, errors, connection not ready) the store is declared down and
 * calls stop waiting for it; once `coolDownMs` has passed, one call probes it, and an answer
 * closes the breaker again. So an outage costs each call at most one timeout before the breaker
 * opens, and nothing after.
 */
export class BackendBreaker {
  private state: 'closed' | 'open' | 'halfOpen' = 'closed';
  private failures = 0;
  private retryAt = 0;
  private downSince = 0;

  constructor(
    private readonly failureThreshold: number,
    private readonly coolDownMs: number,
  ) {}

  /** Whether the store is declared down now. */
  get isDown(): boolean {
    return this.state !== 'closed';
  }

  /** Whether a call at `now` may ask the store. */
  admit(now: number): Admission {
    if (this.state === 'closed') return Admission.Call;
    if (this.state === 'open' && now >= this.retryAt) {
      this.state = 'halfOpen';
      return Admission.Probe;
    }
    return Admission.Skip;
  }

  /** The store answered. Returns how long it was down when this answer ends an outage. */
  success(now: number): number | undefined {
    this.failures = 0;
    if (this.state === 'closed') return undefined;
    this.state = 'closed';
    return Math.max(0, now - this.downSince);
  }

  /** The store failed to answer (in time). */
  failure(now: number): void {
    this.failures++;
    if (this.state === 'halfOpen') {
      this.state = 'open';
      this.retryAt = now + this.coolDownMs;
    } else if (this.state === 'closed' && this.failures >= this.failureThreshold) {
      this.state = 'open';
      this.downSince = now;
      this.retryAt = now + this.coolDownMs;
    }
  }
}
