import { performance } from 'node:perf_hooks';
import type { ClusterDecision, ClusterUnavailable } from '@floodgate/core/cluster';
import { Admission, type BackendBreaker } from './backend-breaker';
import type { DeadlineQueue, Expirable } from './deadline-queue';
import type { RedisCommander } from './redis-commander';
import { isNoScript, type RedisScript } from './redis-script';

/**
 * Turns a script's reply into a decision. `recoveredAfterMs` is set when this reply ends an
 * outage, for the decision to carry. Throws on a reply it cannot read.
 */
export type ReplyParser = (reply: unknown, recoveredAfterMs: number | undefined) => ClusterDecision;

const unavailable = (reason: ClusterUnavailable['reason']): Promise<ClusterDecision> =>
  Promise.resolve(Object.freeze({ status: 'unavailable', reason }) as ClusterDecision);
const BREAKER_OPEN = unavailable('breakerOpen');
const NOT_READY = unavailable('notReady');
const TIMEOUT: ClusterDecision = Object.freeze({ status: 'unavailable', reason: 'timeout' });

/** One script call in flight, settled by its reply, its error or its deadline. */
class PendingCall implements Expirable {
  settled = false;
  readonly deadline: number;

  constructor(
    private readonly gate: StoreGate,
    private readonly parse: ReplyParser,
    private readonly resolve: (decision: ClusterDecision) => void,
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
    let decision: ClusterDecision;
    try {
      decision = this.parse(reply, this.gate.succeeded());
    } catch (error) {
      decision = { status: 'unavailable', reason: 'error', error };
    }
    this.resolve(decision);
  }

  failed(error: unknown): void {
    if (this.settled) return;
    if (this.script !== undefined && isNoScript(error)) {
      // Redis lost its script cache (restart, SCRIPT FLUSH): send the script in full, once.
      const full = this.script.inFull(this.command);
      this.script = undefined;
      this.gate.send(full, this);
      return;
    }
    this.settled = true;
    this.gate.failed();
    this.resolve({ status: 'unavailable', reason: 'error', error });
  }

  expire(): void {
    this.settled = true;
    this.gate.failed();
    this.resolve(TIMEOUT);
  }
}

/**
 * Every call to the store goes through here: the breaker decides whether to ask at all, a
 * connection that is not ready answers at once, and a call waits at most `timeoutMs` (real
 * time) for its reply. It never rejects: every failure is a `'unavailable'` decision.
 */
export class StoreGate {
  constructor(
    private readonly commander: RedisCommander,
    private readonly breaker: BackendBreaker,
    private readonly deadlines: DeadlineQueue,
    private readonly timeoutMs: number,
    private readonly localNow: () => number,
  ) {}

  private closed = false;

  /** Runs `script` on `keys` within the timeout; `parse` reads its reply. */
  run(script: RedisScript, keys: readonly string[], args: readonly string[], parse: ReplyParser): Promise<ClusterDecision> {
    if (this.closed) return NOT_READY;
    if (this.breaker.admit(this.localNow()) === Admission.Skip) return BREAKER_OPEN;
    if (!this.commander.isReady()) {
      this.failed();
      return NOT_READY;
    }
    const command = script.command(keys, args);
    return new Promise<ClusterDecision>((resolve) => {
      const call = new PendingCall(this, parse, resolve, this.timeoutMs, script, command);
      this.deadlines.add(call);
      this.send(command, call);
    });
  }

  /** @internal Sends `command` for `call`. */
  send(command: readonly string[], call: PendingCall): void {
    this.commander.send(command).then(
      (reply) => call.replied(reply),
      (error: unknown) => call.failed(error),
    );
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
