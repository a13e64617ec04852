import type { Clock } from '../kernel/clock';
import { Entry, type EntryAttempt } from '../kernel/entry';
import { isPriority, type Priority } from '../kernel/priority';
import { isBlockError, type BlockError } from '../kernel/errors';
import type { EventHub, Topic } from '../kernel/events';
import { MAX_DURATION_MS, show } from '../kernel/rule-reader';
import {
  DECIDE_LOCALLY,
  isHandoverWait,
  type AsyncCheckResult,
  type Checker,
  type HandoverWait,
} from '../kernel/rule-kind';
import { RuleBlockCounts, ruleIdOf, type RulesOf } from './block-counts';
import type { FloodgateEventMap } from './events';
import type { ResourceState } from './resource-state';
import { answerBlock, answerFailure, linkSignal, settle, type Deadline, type OutcomeHandlers } from './run-outcome';
import type { TrackedResources } from './tracked-resources';

/** Options of one guarded call. */
export interface EntryOptions {
  /** The call's arguments, for hotspot rules with `paramIndex`. */
  readonly args?: readonly unknown[];
  /** Named parameters, for hotspot rules with `paramKey`. */
  readonly params?: Readonly<Record<string, unknown>>;
  /**
   * The values of key sources, for hotspot rules with `key`, by `keySourceId(source)`
   * (`'header:x-api-key'`); the HTTP adapters set them from `resourceInfo().keySources`.
   */
  readonly keys?: Readonly<Record<string, unknown>>;
  /** Tokens the call takes: a safe integer >= 0. @defaultValue 1 */
  readonly acquireCount?: number;
  /** Who is calling, for origin-specific flow rules and authority rules. @defaultValue '' */
  readonly origin?: string;
  /**
   * Whether the call enters the service from outside (an HTTP request, a message): system
   * protection rules check inbound calls only. HTTP adapters set it.
   * @defaultValue false
   */
  readonly inbound?: boolean;
  /**
   * What the call is to the operation it serves: its `'first'` attempt, a `'retry'`, or a
   * `'hedge'`. Retry budget rules refuse retries and hedges beyond what first attempts earned.
   * @defaultValue 'first'
   */
  readonly attempt?: EntryAttempt;
  /**
   * How much the call matters under overload (see `Priority`): system rules and `adaptive` flow
   * rules refuse `'sheddable'` calls first and `'critical'` ones last; partitioned concurrency
   * rules count it in its priority's share; `prioritized` QPS rules let critical calls borrow
   * from the next window, and `prioritized` queues of concurrency rules serve them first.
   * @defaultValue 'default'
   */
  readonly priority?: Priority;
}

/** Options of a call that may wait (`enter`). */
export interface EnterOptions extends EntryOptions {
  /** Abandons a queued wait: the slot is given back and `enter()` rejects with the reason. */
  readonly signal?: AbortSignal;
}

/** Options of `run()`: an entry's options plus how blocks, failures and timeouts are answered. */
export interface RunOptions<T> extends EnterOptions, OutcomeHandlers<T | Promise<T>> {}

/** Options of `runSync()`. */
export interface RunSyncOptions<T> extends EntryOptions, OutcomeHandlers<T> {}

const ATTEMPTS: ReadonlySet<unknown> = new Set<EntryAttempt>(['first', 'retry', 'hedge']);

/**
 * Admission: runs a call's checks, in kind order, and admits it (its `Entry` counts what it
 * takes) or refuses it (counted by rule and announced). `run` and `runSync` wrap a function in
 * an admitted entry. What an entry takes and gives back is the `Entry`'s own business.
 */
export class Admission {
  private readonly passes: Topic<FloodgateEventMap['pass']>;
  private readonly blocks: Topic<FloodgateEventMap['block']>;

  constructor(
    private readonly clock: Clock,
    private readonly resources: TrackedResources,
    private readonly events: EventHub<FloodgateEventMap>,
    private readonly rulesOf: RulesOf,
  ) {
    this.passes = events.topic('pass');
    this.blocks = events.topic('block');
  }

  /** See `Floodgate.tryEntry`. */
  tryEntry(resource: string, options: EntryOptions | undefined): Entry | BlockError {
    return this.tryEntryIn(this.resources.stateOf(resource), resource, options);
  }

  /** `tryEntry` on the resource's state already looked up (`run` looks it up once for both). */
  private tryEntryIn(
    state: ResourceState | undefined,
    resource: string,
    options: EntryOptions | undefined,
  ): Entry | BlockError {
    const now = this.clock.now();
    const entry = this.newEntry(resource, options, state, now);
    const checkers = this.resources.checkersOf(state, entry.inbound);
    try {
      for (let i = 0; i < checkers.length; i++) {
        const result = checkers[i]!.check(entry, now, false);
        if (result !== undefined) return this.refuse(entry, result as BlockError, now, state);
      }
    } catch (error) {
      // A check that throws gives back what the earlier ones took.
      entry.refused(now);
      throw error;
    }
    this.admit(entry, now, state);
    return entry;
  }

  /** See `Floodgate.enter`. */
  enter(resource: string, options: EnterOptions | undefined): Promise<Entry> {
    try {
      const signal = options?.signal;
      signal?.throwIfAborted();
      const state = this.resources.stateOf(resource);
      if (this.resources.mayWaitOn(state, options?.inbound === true))
        return this.enterWaiting(state, resource, options, signal);
      const result = this.tryEntryIn(state, resource, options);
      return result instanceof Entry ? Promise.resolve(result) : Promise.reject(result);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** See `Floodgate.run`. */
  run<T>(
    resource: string,
    fn: (entry: Entry, signal: AbortSignal | undefined) => T | Promise<T>,
    options: RunOptions<T>,
    thisArg?: unknown,
  ): Promise<T> {
    try {
      const signal = options.signal;
      signal?.throwIfAborted();
      if (options.timeoutMs !== undefined) checkTimeout(options.timeoutMs);
      const state = this.resources.stateOf(resource);
      if (!this.resources.mayWaitOn(state, options.inbound === true))
        return Promise.resolve(this.call(this.tryEntryIn(state, resource, options), fn, options, thisArg));
      return this.enterWaiting(state, resource, options, signal).then(
        (entry) => this.call(entry, fn, options, thisArg),
        (error: unknown) => (isBlockError(error) ? answerBlock(error, options) : Promise.reject(error)),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** See `Floodgate.runSync`. */
  runSync<T>(
    resource: string,
    fn: (entry: Entry, signal: AbortSignal | undefined) => T,
    options: RunSyncOptions<T>,
    thisArg?: unknown,
  ): T {
    if (options.timeoutMs !== undefined) checkTimeout(options.timeoutMs);
    return this.call(this.tryEntry(resource, options), fn, options, thisArg);
  }

  /**
   * See `Floodgate.enterOrWait`: as {@link Admission.enter}, but answers synchronously when the
   * call need not wait, and asks `waitSignal` for the call's signal only when it does.
   */
  enterOrWait(
    resource: string,
    options: EntryOptions | undefined,
    waitSignal: () => AbortSignal | undefined,
  ): Entry | BlockError | Promise<Entry> {
    const state = this.resources.stateOf(resource);
    if (!this.resources.mayWaitOn(state, options?.inbound === true)) return this.tryEntryIn(state, resource, options);
    const entry = this.newEntry(resource, options, state, this.clock.now());
    const checkers = this.resources.checkersOf(state, entry.inbound);
    for (let i = 0; i < checkers.length; i++)
      if (checkers[i]!.checkAsync !== undefined) return this.enterAsking(entry, checkers, state, waitSignal());
    return this.decide(entry, checkers, undefined, state, waitSignal);
  }

  /**
   * The decision that may wait or ask a shared store. Every asynchronous check (cluster rules)
   * is awaited first; then every local check runs and the call is admitted in one synchronous
   * step, so no concurrent call can pass a local rule between a check and its admission; the
   * call is counted at once and then waits out the longest queueing wait its rules reserved.
   */
  private enterWaiting(
    state: ResourceState | undefined,
    resource: string,
    options: EnterOptions | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Entry> {
    const entry = this.newEntry(resource, options, state, this.clock.now());
    return this.enterAsking(entry, this.resources.checkersOf(state, entry.inbound), state, signal);
  }

  /** {@link Admission.enterWaiting} once the entry is made: the shared store asked, then {@link Admission.decide}. */
  private async enterAsking(
    entry: Entry,
    checkers: readonly Checker[],
    state: ResourceState | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Entry> {
    let decisions: AsyncCheckResult[] | undefined;
    for (let i = 0; i < checkers.length; i++) {
      const checker = checkers[i]!;
      if (checker.checkAsync === undefined) continue;
      let decision: AsyncCheckResult;
      try {
        decision = await checker.checkAsync(entry, this.clock.now());
      } catch (error) {
        entry.refused(this.clock.now());
        throw error;
      }
      if (decision !== undefined && typeof decision === 'object')
        throw this.refuse(entry, decision, this.clock.now(), state);
      (decisions ??= [])[i] = decision;
    }
    const decided = this.decide(entry, checkers, decisions, state, () => signal);
    if (decided instanceof Entry || decided instanceof Promise) return decided;
    throw decided;
  }

  /**
   * The synchronous step of a decision that may wait: every local check (or the shared store's
   * `decisions`), then the call is admitted, or refused (the block returned). Admitted, it is the
   * entry when no rule made it wait, else the promise of its waits, taken with `waitSignal()`.
   */
  private decide(
    entry: Entry,
    checkers: readonly Checker[],
    decisions: readonly AsyncCheckResult[] | undefined,
    state: ResourceState | undefined,
    waitSignal: () => AbortSignal | undefined,
  ): Entry | BlockError | Promise<Entry> {
    const now = this.clock.now();
    let wait = 0;
    let handovers: HandoverWait[] | undefined;
    for (let i = 0; i < checkers.length; i++) {
      const checker = checkers[i]!;
      let result: AsyncCheckResult | HandoverWait;
      if (checker.checkAsync !== undefined && decisions?.[i] !== DECIDE_LOCALLY) result = decisions?.[i];
      else {
        try {
          result = checker.check(entry, now, true);
        } catch (error) {
          entry.refused(now);
          throw error;
        }
      }
      if (result === undefined) continue;
      if (typeof result === 'number') wait = Math.max(wait, result);
      else if (isHandoverWait(result)) (handovers ??= []).push(result);
      else return this.refuse(entry, result as BlockError, now, state);
    }
    this.admit(entry, now, state);
    if (handovers === undefined && !(wait > 0)) return entry;
    return this.waitOut(entry, now, wait, handovers, waitSignal(), state);
  }

  /**
   * Waits out what an admitted call's rules reserved: the slots queues hand over, then the
   * longest pacing wait, counted from `now`, the instant it was admitted.
   */
  private async waitOut(
    entry: Entry,
    now: number,
    wait: number,
    handovers: readonly HandoverWait[] | undefined,
    signal: AbortSignal | undefined,
    state: ResourceState | undefined,
  ): Promise<Entry> {
    if (handovers !== undefined) {
      await this.awaitHandovers(entry, handovers, signal, state);
      // A pacing slot reserved at `now` is due `wait` ms after it, however long the queue took.
      wait -= this.clock.now() - now;
    }
    if (wait > 0) {
      try {
        await this.clock.sleep(wait, signal);
      } catch (reason) {
        entry.cancel();
        throw reason;
      }
      entry.waited(this.clock.now());
    }
    return entry;
  }

  /**
   * Waits, admitted, for the slots queues hand over (concurrency rules with `maxQueueLength`),
   * one after the other: a slot handed over is held while the next is awaited. A wait refused
   * (its deadline, its rule gone) refuses the call as its check would have, and gives back what
   * it took; an abort gives it back and rejects with the signal's reason.
   */
  private async awaitHandovers(
    entry: Entry,
    handovers: readonly HandoverWait[],
    signal: AbortSignal | undefined,
    state: ResourceState | undefined,
  ): Promise<void> {
    try {
      for (let i = 0; i < handovers.length; i++) await handovers[i]!.handover(signal);
    } catch (reason) {
      if (isBlockError(reason)) throw this.refuse(entry, reason, this.clock.now(), state);
      entry.cancel();
      throw reason;
    }
    entry.waited(this.clock.now());
  }

  /** Calls `fn` in an admitted entry, or answers the block; shared by `run` and `runSync`. */
  private call<R>(
    admitted: Entry | BlockError,
    fn: (entry: Entry, signal: AbortSignal | undefined) => R,
    options: OutcomeHandlers<R> & { readonly signal?: AbortSignal },
    thisArg: unknown,
  ): R {
    if (!(admitted instanceof Entry)) return answerBlock(admitted, options);
    let deadline: Deadline | undefined;
    let signal = options.signal;
    if (options.timeoutMs !== undefined) {
      const controller = new AbortController();
      const unlink = signal === undefined ? undefined : linkSignal(signal, controller);
      deadline = { clock: this.clock, timeoutMs: options.timeoutMs, controller, unlink };
      signal = controller.signal;
    }
    let result: R;
    try {
      // The same call either way; a plain one without `thisArg`, as `fn.call` reads `call` off
      // functions of every kind run() is given (a polymorphic load, 25 instructions counted).
      result = thisArg === undefined ? fn(admitted, signal) : fn.call(thisArg, admitted, signal);
    } catch (error) {
      deadline?.unlink?.();
      return answerFailure(admitted, error, options);
    }
    return settle(admitted, result, options, deadline);
  }

  /** The entry of a call, its options validated, counted where its resource's rules read. */
  private newEntry(
    resource: string,
    options: EntryOptions | undefined,
    state: ResourceState | undefined,
    now: number,
  ): Entry {
    let acquireCount = 1;
    let origin = '';
    let inbound = false;
    let attempt: EntryAttempt = 'first';
    let priority: Priority = 'default';
    if (options !== undefined) {
      if (options.acquireCount !== undefined) {
        acquireCount = options.acquireCount;
        if (!Number.isSafeInteger(acquireCount) || acquireCount < 0) {
          throw new RangeError(`acquireCount must be a safe integer >= 0, got ${show(acquireCount)}`);
        }
      }
      if (options.origin !== undefined) {
        origin = options.origin;
        if (typeof origin !== 'string') throw new TypeError(`origin must be a string, got ${show(origin)}`);
      }
      inbound = options.inbound === true;
      if (options.attempt !== undefined) {
        attempt = options.attempt;
        if (!ATTEMPTS.has(attempt))
          throw new TypeError(`attempt must be 'first', 'retry' or 'hedge', got ${show(attempt)}`);
      }
      if (options.priority !== undefined) {
        priority = options.priority;
        if (!isPriority(priority))
          throw new TypeError(`priority must be 'critical', 'default' or 'sheddable', got ${show(priority)}`);
      }
    }
    return new Entry(
      this.clock,
      resource,
      now,
      acquireCount,
      origin,
      inbound,
      options?.args,
      options?.params,
      options?.keys,
      attempt,
      state?.node,
      state !== undefined && origin !== '' ? state.originNode(origin) : undefined,
      inbound && this.resources.inboundCounted ? this.resources.inboundNode : undefined,
      state?.rules.exitHooks,
      priority,
    );
  }

  /** Admits a call every check passed: the entry counts what it takes, by priority too; announced. */
  private admit(entry: Entry, now: number, state: ResourceState | undefined): void {
    entry.admit(now);
    state?.byPriority.passed(entry.priority, entry.acquireCount);
    if (this.passes.active)
      this.events.publish(this.passes, {
        resource: entry.resource,
        origin: entry.origin,
        acquireCount: entry.acquireCount,
        priority: entry.priority,
      });
  }

  /** Refuses a call: the entry counts the block and gives back what it took; counted by rule, and announced. */
  private refuse(entry: Entry, error: BlockError, now: number, state: ResourceState | undefined): BlockError {
    const count = entry.acquireCount;
    entry.blocked(now);
    // By rule: in place when the rule that refused last refuses again (as under attack). An
    // untracked resource (past the cap) is counted nowhere, by rule neither.
    let ruleId: string | undefined;
    if (state !== undefined) {
      state.byPriority.blocked(entry.priority, count);
      const blocks = (state.blocks ??= new RuleBlockCounts());
      const last = blocks.lastSlot;
      if (last !== undefined && error.rule === blocks.lastRule) {
        last.count += count;
        ruleId = last.ruleId;
      } else {
        ruleId = blocks.add(error, count, this.rulesOf);
      }
    }
    if (this.blocks.active) {
      this.events.publish(this.blocks, {
        resource: entry.resource,
        origin: entry.origin,
        error,
        ruleId: ruleId ?? ruleIdOf(error, this.rulesOf),
        priority: entry.priority,
      });
    }
    return error;
  }
}

/** Validates a `timeoutMs` given (the caller tests for `undefined`: a call inlined where the option is absent). */
function checkTimeout(timeoutMs: number): void {
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_DURATION_MS) {
    throw new RangeError(`timeoutMs must be a number > 0 and <= ${MAX_DURATION_MS}, got ${show(timeoutMs)}`);
  }
}
