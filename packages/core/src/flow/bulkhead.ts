import { scheduleOn, type Clock } from '../kernel/clock';
import type { Entry, EntryAttachment } from '../kernel/entry';
import { priorityIndex } from '../kernel/priority';
import type { Checker, CheckResult, HandoverWait } from '../kernel/rule-kind';
import { FlowBlockError, type FlowRule } from './flow-rule';

/**
 * A bulkhead: a concurrency `reject` rule with a bounded queue (`maxQueueLength`). At most
 * `threshold` calls hold a slot; a call that finds them taken waits, first in first out, for a
 * call to end, at most `maxQueueingTimeMs`, if fewer than `maxQueueLength` wait already; else it
 * is refused at once. A slot freed goes straight to the first waiter that fits (handed over, so no
 * newcomer takes it between the release and the waiter's wake-up), and newcomers queue behind
 * waiters even when a slot is free for them (strict FIFO, as Resilience4j's and Polly's
 * bulkheads). Time is read from the engine's clock; the only timer is a waiter's deadline.
 *
 * A `prioritized` rule's queue serves waiters by priority instead: critical ones first, then
 * default, then sheddable, first in first out within a priority; and a full queue makes room for
 * a newcomer more important than its last waiter by refusing that waiter (the newest of the least
 * important), so under overload the sheddable calls absorb the refusals and critical ones wait
 * only for a slot to free up.
 *
 * The bulkhead counts the slots its own calls hold, not the resource's statistics: a call in
 * flight when the rule came into force is not counted by it. It is kept across reloads of a rule
 * with the same `limitOrigin` ({@link Bulkhead.configure}); when its rule leaves, its waiters
 * are refused ({@link Bulkhead.retire}).
 */
export class Bulkhead {
  private rule!: FlowRule;
  private inUse = 0;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly clock: Clock) {}

  /** Slots held now. */
  get running(): number {
    return this.inUse;
  }

  /** Calls waiting now. */
  get queued(): number {
    return this.waiters.length;
  }

  /** The rule in force: the newest waiters beyond a smaller queue are refused; a larger threshold wakes waiters. */
  configure(rule: FlowRule): void {
    this.rule = rule;
    const max = rule.maxQueueLength!;
    while (this.waiters.length > max) this.waiters.pop()!.settle(false);
    this.drain();
  }

  /** The rule left: every waiter is refused. Slots held are given back as their calls end. */
  retire(): void {
    const waiters = this.waiters.splice(0);
    for (let i = 0; i < waiters.length; i++) waiters[i]!.settle(false);
  }

  /** Decides one call: a slot now, a place in the queue (when it can wait), or a refusal. */
  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    const count = entry.acquireCount;
    if (count === 0) return undefined;
    const rule = this.rule;
    const waiters = this.waiters;
    if (waiters.length === 0 && this.inUse + count <= rule.threshold) {
      this.inUse += count;
      entry.attach(new Waiter(this, entry, now, true));
      return undefined;
    }
    if (!canWait || count > rule.threshold || !(rule.maxQueueingTimeMs! > 0)) return this.refusal(entry);
    const rank = rule.prioritized === true ? priorityIndex(entry.priority) : 0;
    if (waiters.length >= rule.maxQueueLength!) {
      // Full: only a prioritized queue makes room, and only for a call more important than its last waiter.
      if (rank >= waiters[waiters.length - 1]!.rank) return this.refusal(entry);
      waiters.pop()!.settle(false);
    }
    const waiter = new Waiter(this, entry, now, false, rank);
    // Behind every waiter of the same or a more important priority (all of them in a FIFO queue).
    let at = waiters.length;
    while (at > 0 && waiters[at - 1]!.rank > rank) at--;
    waiters.splice(at, 0, waiter);
    entry.attach(waiter);
    // A newcomer put first may fit where the waiter it passed did not (that one asked for more slots).
    if (at === 0) this.drain();
    return waiter;
  }

  /** @internal The flow block error for `entry`: no retry time is known (it depends on calls ending). */
  refusal(entry: Entry): FlowBlockError {
    return new FlowBlockError({
      resource: entry.resource,
      rule: this.rule,
      retryAfterMs: undefined,
      origin: entry.origin,
    });
  }

  /** @internal The longest wait of the rule in force. */
  get maxWaitMs(): number {
    return this.rule.maxQueueingTimeMs!;
  }

  /** @internal The clock waiters read their deadline on. */
  get time(): Clock {
    return this.clock;
  }

  /** @internal A call that held `count` slots ended: its slots go to the waiters that fit, in order. */
  release(count: number): void {
    this.inUse -= count;
    this.drain();
  }

  /** @internal A waiter left the queue (aborted, timed out, or its call refused by a later check). */
  leave(waiter: Waiter): void {
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
    // The head leaving may let the next one fit.
    if (i === 0) this.drain();
  }

  private drain(): void {
    const threshold = this.rule.threshold;
    for (;;) {
      const head = this.waiters[0];
      if (head === undefined || this.inUse + head.count > threshold) return;
      this.waiters.shift();
      this.inUse += head.count;
      head.settle(true);
    }
  }
}

/** The timeout of a wait that has none yet. */
const noTimeout = (): void => undefined;

const enum WaiterState {
  /** In the queue. */
  Queued,
  /** Holds its slots (admitted at once, or handed them). */
  Holding,
  /** Left: refused, aborted, or its slots given back. */
  Gone,
}

/** One call's place in a {@link Bulkhead}: its wait, then the slots it holds until it ends. */
class Waiter implements EntryAttachment, HandoverWait {
  readonly count: number;
  /** Its place among priorities in a prioritized queue (`priorityIndex`: 0 is served first); 0 in a FIFO queue. */
  readonly rank: number;
  private state: WaiterState;
  private readonly deadline: number;
  private onSettle: ((granted: boolean) => void) | undefined;

  constructor(
    private readonly bulkhead: Bulkhead,
    private readonly entry: Entry,
    now: number,
    holding: boolean,
    rank = 0,
  ) {
    this.count = entry.acquireCount;
    this.rank = rank;
    this.state = holding ? WaiterState.Holding : WaiterState.Queued;
    this.deadline = now + bulkhead.maxWaitMs;
  }

  handover(signal: AbortSignal | undefined): Promise<void> {
    if (this.state === WaiterState.Holding) return Promise.resolve();
    if (this.state === WaiterState.Gone) return Promise.reject(this.bulkhead.refusal(this.entry));
    return new Promise<void>((resolve, reject) => {
      let cancelTimeout = noTimeout;
      const onAbort = (): void => {
        this.leaveQueue();
        finish();
        reject(signal!.reason);
      };
      const finish = (): void => {
        this.onSettle = undefined;
        signal?.removeEventListener('abort', onAbort);
        cancelTimeout();
      };
      this.onSettle = (granted) => {
        finish();
        if (granted) resolve();
        else reject(this.bulkhead.refusal(this.entry));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const clock = this.bulkhead.time;
      cancelTimeout = scheduleOn(clock, Math.max(0, this.deadline - clock.now()), () => {
        if (this.state !== WaiterState.Queued) return;
        this.leaveQueue();
        this.onSettle?.(false);
      });
    });
  }

  /** Handed the slots (`granted`) or refused, by the bulkhead, after leaving its queue. */
  settle(granted: boolean): void {
    if (this.state !== WaiterState.Queued) return;
    this.state = granted ? WaiterState.Holding : WaiterState.Gone;
    this.onSettle?.(granted);
  }

  exited(): void {
    // The call ran in its slot; the slot is given back when its work settles (`freed`).
  }

  freed(): void {
    this.giveBack();
  }

  released(): void {
    if (this.state === WaiterState.Queued) this.leaveQueue();
    else this.giveBack();
  }

  private leaveQueue(): void {
    this.state = WaiterState.Gone;
    this.bulkhead.leave(this);
  }

  private giveBack(): void {
    if (this.state !== WaiterState.Holding) return;
    this.state = WaiterState.Gone;
    this.bulkhead.release(this.count);
  }
}

/** Checks one concurrency rule with a queue, on the calls its `limitOrigin` names. */
export class BulkheadChecker implements Checker {
  /** Calls of `enter()` and `run()` may wait in the queue. */
  readonly mayWait = true;

  constructor(
    readonly rule: FlowRule,
    private readonly bulkhead: Bulkhead,
  ) {}

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    const origin = this.rule.limitOrigin;
    if (origin !== 'default' && entry.origin !== origin) return undefined;
    return this.bulkhead.check(entry, now, canWait);
  }
}
