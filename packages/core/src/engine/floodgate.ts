import type { CircuitBreakerStatus } from '../circuit-breaker/circuit-breaker-rule';
import { CircuitBreakerChecker } from '../circuit-breaker/circuit-breaker-kind';
import { ClusterBreakerChecker } from '../cluster/cluster-breaker';
import { RetryBudgetChecker } from '../retry-budget/retry-budget-kind';
import type { RetryBudgetStatus } from '../retry-budget/retry-budget-rule';
import { monotonicClock, type Clock } from '../kernel/clock';
import type { ClusterBackend } from '../kernel/cluster-contract';
import { Entry, type EntryAttempt } from '../kernel/entry';
import { isBlockError, RuleValidationError, type BlockError } from '../kernel/errors';
import { EventHub } from '../kernel/events';
import { MAX_DURATION_MS, MAX_RESOURCE_NAME_LENGTH, RuleReader, show } from '../kernel/rule-reader';
import {
  DECIDE_LOCALLY,
  type AsyncCheckResult,
  type Checker,
  type CompiledRules,
  type RuleKind,
} from '../kernel/rule-kind';
import { StatisticNode, type ResourceStats, type ResourceTotals, type SecondStats } from '../kernel/statistic-node';
import { processProbe, type SystemProbe } from '../kernel/system-probe';
import { RuleBlockCounts, ruleIdOf, type RuleBlockCount, type RulesOf } from './block-counts';
import { DIAGNOSTICS_CHANNELS, type FloodgateEventMap } from './events';
import { KINDS_BY_KEY, RULE_KINDS, type AnyRule, type RuleKindKey, type RuleSet, type RuleSetOptions } from './kinds';
import { ResourceRules, ResourceState, RulePool, type CompileServices, type ResourceInfo } from './resource-state';
import { RuleStore, type RuleChange, type RuleDescription } from './rule-store';
import { normalizeRuleSet } from './rule-set-input';
import { unwrapRollout } from './rollout';
import { answerBlock, answerFailure, linkSignal, settle, type Deadline, type OutcomeHandlers } from './run-outcome';
import type { AuthorityRuleOptions } from '../authority/authority';
import type { CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import type { FlowRuleOptions } from '../flow/flow-rule';
import type { HotParamRuleOptions } from '../hot-param/hot-param-rule';
import type { SystemRuleOptions } from '../system/system-rule';

/** Options of a {@link Floodgate} engine. */
export interface FloodgateOptions {
  /** Where time comes from; tests pass a `ManualClock`. @defaultValue the monotonic clock */
  readonly clock?: Clock;
  /** A shared store for cluster rules (`redisCluster()` from `@floodgate/redis`). */
  readonly cluster?: ClusterBackend;
  /**
   * Where system rules read the process's load (event-loop delay and utilisation, CPU, memory);
   * tests pass a `ManualProbe`. The default samples only while a system rule that reads it is
   * loaded.
   * @defaultValue `processProbe`, shared by every engine of the process
   */
  readonly probe?: SystemProbe;
  /**
   * Most resources tracked. Past it, new resource names without rules are neither tracked nor
   * limited (inbound calls still pass through system protection), and a `warning` is emitted
   * once. With names of at most 1024 characters, this bounds what resources cost.
   * @defaultValue 6000
   */
  readonly maxResources?: number;
  /**
   * Where random numbers in [0, 1) come from (adaptive throttling draws its refusals from it,
   * outbound retries their jitter); tests pass a seeded or scripted source.
   * @defaultValue `Math.random`
   */
  readonly random?: () => number;
}

/** Defaults of the engine's options. */
export const FLOODGATE_DEFAULTS = Object.freeze({
  /** Sentinel's `MAX_SLOT_CHAIN_SIZE`: resources beyond it are not limited. */
  maxResources: 6000,
} as const);

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

/** Options of `loadRules()`. */
export interface LoadOptions {
  /**
   * Who loads the rules, as `describeRules()` and `rulesLoaded` report it: `'file'`, `'redis'`,
   * `'dashboard'`, or any name.
   * @defaultValue 'api'
   */
  readonly source?: string;
  /**
   * Kinds the rule set replaces whole: each one listed that the set lacks is emptied, in the
   * same step (a file's version that dropped a kind, a dashboard edit, which is the whole loaded
   * layer). The set is validated as given first, so a refused set empties nothing.
   * @defaultValue [] (only the kinds the set holds are replaced)
   */
  readonly replaces?: readonly RuleKindKey[];
}

/**
 * What each diagnostics channel (`DIAGNOSTICS_CHANNELS`) publishes: the engine that emitted the
 * event, so an APM agent tells engines apart, and the event as `on()` listeners receive it.
 */
export interface DiagnosticsMessage<K extends keyof FloodgateEventMap = keyof FloodgateEventMap> {
  /** The engine that emitted the event. */
  readonly floodgate: Floodgate;
  /** The event, as `on()` listeners receive it (the same object). */
  readonly event: FloodgateEventMap[K];
}

const OPTION_KEYS = ['clock', 'cluster', 'probe', 'maxResources', 'random'] as const;
const ATTEMPTS: ReadonlySet<unknown> = new Set<EntryAttempt>(['first', 'retry', 'hedge']);
const EMPTY_RULES = new ResourceRules(
  RULE_KINDS.map(() => ({ checkers: [] })),
  [],
);

/**
 * An isolated traffic-governance engine: statistics per resource, rules by kind, and the
 * checks authority → system → hotspot → flow → circuit breaker on every entry.
 *
 * @example
 * const fg = new Floodgate();
 * fg.loadRules({ flow: [{ resource: 'getUser', threshold: 100 }] });
 * const entry = fg.entry('getUser');
 * try { return getUser(); } catch (e) { entry.traceError(e); throw e; } finally { entry.exit(); }
 */
export class Floodgate {
  /** The engine's clock. */
  readonly clock: Clock;
  /** The cluster backend, if any. */
  readonly cluster: ClusterBackend | undefined;
  /** Where system rules read the process's load. */
  readonly probe: SystemProbe;
  /** Where random numbers in [0, 1) come from. */
  readonly random: () => number;
  private readonly maxResources: number;
  private readonly events = new EventHub<FloodgateEventMap>(DIAGNOSTICS_CHANNELS, this);
  private readonly store = new RuleStore();
  private readonly resources = new Map<string, ResourceState>();
  /**
   * Every inbound call, all resources together (what system protection reads), counted while an
   * inbound kind has rules: an HTTP request pays for it only where it is read.
   */
  private readonly inboundNode = new StatisticNode('inbound');
  private inboundCounted = false;
  /** The inbound kinds' compiled rules, by kind position (`undefined` for resource kinds). */
  private inbound: (CompiledRules | undefined)[] = RULE_KINDS.map(() => undefined);
  private readonly inboundPool = new RulePool();
  private inboundVersion = 0;
  /** The checks of an inbound call to an untracked resource. */
  private untrackedInbound = EMPTY_RULES;
  /** Resources the rules in force read besides their own (`relate`): tracked past the cap. Rebuilt when read after a change to such a kind. */
  private references: ReadonlySet<string> | undefined;
  private readonly services: CompileServices;
  /** The rules in force of a kind on a resource, for naming the rule of a block. */
  private readonly rulesOf: RulesOf = (kind, resource) => this.store.rulesOf(kind.key as RuleKindKey, resource);
  private capWarned = false;

  /** @throws RuleValidationError when an option is unknown or has a wrong value. */
  constructor(options: FloodgateOptions = {}) {
    const reader = new RuleReader();
    const obj = reader.object(options, 'options') ?? {};
    reader.knownKeys(obj, OPTION_KEYS, 'options');
    const clock = obj.clock as Clock | undefined;
    if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock?.sleep !== 'function')) {
      reader.fail('options.clock', 'must have now() and sleep(ms) methods');
    }
    const cluster = obj.cluster as ClusterBackend | undefined;
    if (
      cluster !== undefined &&
      (typeof cluster !== 'object' || cluster === null || typeof cluster.limiter !== 'function')
    ) {
      reader.fail('options.cluster', 'must be a cluster backend, such as redisCluster() from @floodgate/redis');
    }
    const probe = obj.probe as SystemProbe | undefined;
    if (probe !== undefined && (typeof probe?.read !== 'function' || typeof probe?.start !== 'function')) {
      reader.fail('options.probe', 'must have read() and start() methods, such as a ManualProbe');
    }
    const random = obj.random as (() => number) | undefined;
    if (random !== undefined && typeof random !== 'function') {
      reader.fail('options.random', `must be a function returning numbers in [0, 1), got ${show(random)}`);
    }
    const maxResources = reader.number(
      obj,
      'maxResources',
      'options',
      { min: 1, integer: true },
      FLOODGATE_DEFAULTS.maxResources,
    );
    reader.throwIfAny('Invalid Floodgate options');
    this.clock = clock ?? monotonicClock;
    this.cluster = cluster;
    this.probe = probe ?? processProbe;
    this.random = random ?? Math.random;
    this.maxResources = maxResources;
    this.services = {
      clock: this.clock,
      random: this.random,
      events: this.events,
      cluster,
      inbound: this.inboundNode,
      probe: this.probe,
      lookupNode: (resource) => this.resources.get(resource)?.node,
      rulesOf: this.rulesOf,
    };
  }

  // ---------------------------------------------------------------- entries

  /**
   * Guards one call synchronously; never waits. Where a throttling rule would queue the call,
   * it passes only if no wait is needed; cluster rules decide from leased tokens or locally.
   * @throws BlockError when a rule refuses the call.
   * @throws TypeError for a bad resource name; RangeError for a bad `acquireCount`.
   */
  entry(resource: string, options?: EntryOptions): Entry {
    const result = this.tryEntry(resource, options);
    if (result instanceof Entry) return result;
    throw result;
  }

  /** As {@link Floodgate.entry}, but returns the {@link BlockError} instead of throwing it. */
  tryEntry(resource: string, options?: EntryOptions): Entry | BlockError {
    const state = this.stateOf(resource);
    const now = this.clock.now();
    const entry = this.newEntry(resource, options, state, now);
    const checkers = this.checkersOf(state, entry.inbound);
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
    this.admit(entry, now);
    return entry;
  }

  /**
   * Guards one call, waiting (through the clock) where a throttling rule queues it, up to the
   * rule's `maxQueueingTimeMs`; cluster rules consult the shared store here.
   * @throws BlockError when a rule refuses the call; the signal's reason when it aborts.
   */
  enter(resource: string, options?: EnterOptions): Promise<Entry> {
    try {
      const signal = options?.signal;
      signal?.throwIfAborted();
      const state = this.stateOf(resource);
      if (this.mayWaitOn(state, options?.inbound === true)) return this.enterWaiting(state, resource, options, signal);
      const result = this.tryEntry(resource, options);
      return result instanceof Entry ? Promise.resolve(result) : Promise.reject(result);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The decision that may wait or ask a shared store. Every asynchronous check (cluster rules)
   * is awaited first; then every local check runs and the call is admitted in one synchronous
   * step, so no concurrent call can pass a local rule between a check and its admission; the
   * call is counted at once and then waits out the longest queueing wait its rules reserved.
   */
  private async enterWaiting(
    state: ResourceState | undefined,
    resource: string,
    options: EnterOptions | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Entry> {
    const entry = this.newEntry(resource, options, state, this.clock.now());
    const checkers = this.checkersOf(state, entry.inbound);
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
    const now = this.clock.now();
    let wait = 0;
    for (let i = 0; i < checkers.length; i++) {
      const checker = checkers[i]!;
      let result: AsyncCheckResult;
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
      else throw this.refuse(entry, result as BlockError, now, state);
    }
    entry.startedAt = now;
    this.admit(entry, now);
    if (wait > 0) {
      try {
        await this.clock.sleep(wait, signal);
      } catch (reason) {
        entry.cancel();
        throw reason;
      }
      entry.startedAt = this.clock.now();
    }
    return entry;
  }

  /**
   * Enters, calls `fn`, traces what it throws, and exits. A block goes to `blockHandler`, else
   * `fallback`, else is thrown; a failure (or a timeout) goes to `fallback` (unless ignored),
   * else is thrown. `fn` gets the entry and an `AbortSignal` that aborts when `timeoutMs` passes
   * (or when `options.signal` aborts).
   * @example
   * const user = await fg.run('getUser', (entry, signal) => api.getUser(id, { signal }), {
   *   timeoutMs: 2000,
   *   fallback: () => cached(id),
   * });
   */
  run<T>(
    resource: string,
    fn: (entry: Entry, signal: AbortSignal | undefined) => T | Promise<T>,
    options: RunOptions<T> = {},
  ): Promise<T> {
    try {
      const signal = options.signal;
      signal?.throwIfAborted();
      checkTimeout(options.timeoutMs);
      const state = this.stateOf(resource);
      if (!this.mayWaitOn(state, options.inbound === true))
        return Promise.resolve(this.call(this.tryEntry(resource, options), fn, options));
      return this.enterWaiting(state, resource, options, signal).then(
        (entry) => this.call(entry, fn, options),
        (error: unknown) => (isBlockError(error) ? answerBlock(error, options) : Promise.reject(error)),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * As {@link Floodgate.run} without waiting: returns what `fn` returns. When `fn` returns a
   * promise, the entry exits (and a rejection is traced) when it settles, or at `timeoutMs`.
   */
  runSync<T>(
    resource: string,
    fn: (entry: Entry, signal: AbortSignal | undefined) => T,
    options: RunSyncOptions<T> = {},
  ): T {
    checkTimeout(options.timeoutMs);
    return this.call(this.tryEntry(resource, options), fn, options);
  }

  /** Calls `fn` in an admitted entry, or answers the block; shared by `run` and `runSync`. */
  private call<R>(
    admitted: Entry | BlockError,
    fn: (entry: Entry, signal: AbortSignal | undefined) => R,
    options: OutcomeHandlers<R> & { readonly signal?: AbortSignal },
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
      result = fn(admitted, signal);
    } catch (error) {
      deadline?.unlink?.();
      return answerFailure(admitted, error, options);
    }
    return settle(admitted, result, options, deadline);
  }

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
    }
    const entry = new Entry(
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
    );
    if (state !== undefined) {
      entry.node = state.node;
      entry.exitHooks = state.rules.exitHooks;
      if (origin !== '') entry.originNode = state.originNode(origin);
    }
    if (inbound && this.inboundCounted) entry.inboundNode = this.inboundNode;
    return entry;
  }

  private checkersOf(state: ResourceState | undefined, inbound: boolean): readonly Checker[] {
    if (state === undefined) return inbound ? this.untrackedInbound.inboundCheckers : EMPTY_RULES.checkers;
    return inbound ? state.rules.inboundCheckers : state.rules.checkers;
  }

  private mayWaitOn(state: ResourceState | undefined, inbound: boolean): boolean {
    const rules = state === undefined ? (inbound ? this.untrackedInbound : undefined) : state.rules;
    return rules !== undefined && (inbound ? rules.info.inboundMayWait : rules.info.mayWait);
  }

  private admit(entry: Entry, now: number): void {
    const count = entry.acquireCount;
    const node = entry.node;
    if (node !== undefined) {
      node.addPass(now, count);
      node.concurrency++;
    }
    const originNode = entry.originNode;
    if (originNode !== undefined) {
      originNode.addPass(now, count);
      originNode.concurrency++;
    }
    const inboundNode = entry.inboundNode;
    if (inboundNode !== undefined) {
      inboundNode.addPass(now, count);
      inboundNode.concurrency++;
    }
    entry.admitted(now);
    if (this.events.has('pass'))
      this.events.emit('pass', { resource: entry.resource, origin: entry.origin, acquireCount: count });
  }

  /** Counts a refused call (in its windows, and by rule), gives back what it took, and announces it. */
  private refuse(entry: Entry, error: BlockError, now: number, state: ResourceState | undefined): BlockError {
    const count = entry.acquireCount;
    entry.node?.addBlock(now, count);
    entry.originNode?.addBlock(now, count);
    entry.inboundNode?.addBlock(now, count);
    entry.refused(now);
    // By rule: in place when the rule that refused last refuses again (as under attack). An
    // untracked resource (past the cap) is counted nowhere, by rule neither.
    let ruleId: string | undefined;
    if (state !== undefined) {
      const blocks = (state.blocks ??= new RuleBlockCounts());
      const last = blocks.lastSlot;
      if (last !== undefined && error.rule === blocks.lastRule) {
        last.count += count;
        ruleId = last.ruleId;
      } else {
        ruleId = blocks.add(error, count, this.rulesOf);
      }
    }
    if (this.events.has('block')) {
      this.events.emit('block', {
        resource: entry.resource,
        origin: entry.origin,
        error,
        ruleId: ruleId ?? ruleIdOf(error, this.rulesOf),
      });
    }
    return error;
  }

  /** The resource's state with its rules up to date; `undefined` past the resource cap. */
  private stateOf(resource: string): ResourceState | undefined {
    let state = this.resources.get(resource);
    if (state === undefined) {
      if (typeof resource !== 'string' || resource.length === 0 || resource.length > MAX_RESOURCE_NAME_LENGTH) {
        throw new TypeError(
          `resource must be a non-empty string of at most ${MAX_RESOURCE_NAME_LENGTH} characters, got ${show(resource)}`,
        );
      }
      if (this.resources.size >= this.maxResources && !this.isPinned(resource)) {
        this.warnCapReached();
        return undefined;
      }
      state = new ResourceState(resource, EMPTY_RULES);
      this.resources.set(resource, state);
    }
    if (state.dirty || state.inboundVersion !== this.inboundVersion)
      state.refresh(this.services, this.inbound, this.inboundVersion);
    return state;
  }

  /** Resources tracked whatever the cap: those with rules, and those `relate` rules read. */
  private isPinned(resource: string): boolean {
    this.references ??= referencedResources(this.store.effective());
    return this.references.has(resource) || this.store.hasRules(resource);
  }

  private warnCapReached(): void {
    if (this.capWarned) return;
    this.capWarned = true;
    const message = `Floodgate tracks at most ${this.maxResources} resources; new resource names without rules are neither tracked nor limited. Use route templates, not raw URLs, as resource names.`;
    process.emitWarning(message, { code: 'FLOODGATE_MAX_RESOURCES' });
    this.events.emit('warning', { code: 'FLOODGATE_MAX_RESOURCES', message });
  }

  // ---------------------------------------------------------------- rules

  /**
   * Replaces the loaded rules of each kind given (`{ flow }` leaves breakers alone), and empties
   * each kind of `options.replaces` that the set lacks. Validates everything first, as given: on
   * any problem nothing changes, and `rulesRejected` is emitted.
   * @returns the rules loaded, by kind, validated and with defaults resolved (the kinds the set
   * holds; not the kinds emptied through `replaces`).
   * @throws RuleValidationError listing every problem by path; TypeError for bad `options`.
   */
  loadRules(rules: RuleSetOptions, options?: LoadOptions): Partial<RuleSet> {
    const source = sourceOf(options);
    const replaces = replacesOf(options);
    const set = this.validated(() => normalizeRuleSet(rules), source);
    const changes = (Object.keys(set) as RuleKindKey[]).map((kind) =>
      this.store.load(kind, set[kind]! as readonly AnyRule[], source),
    );
    for (const kind of replaces) if (set[kind] === undefined) changes.push(this.store.load(kind, [], source));
    this.applied(changes, source);
    return set;
  }

  /** Replaces the loaded flow rules. @throws RuleValidationError */
  loadFlowRules(rules: readonly FlowRuleOptions[], options?: LoadOptions): void {
    this.loadRules({ flow: rules }, options);
  }

  /** Replaces the loaded circuit breaker rules. @throws RuleValidationError */
  loadCircuitBreakerRules(rules: readonly CircuitBreakerRuleOptions[], options?: LoadOptions): void {
    this.loadRules({ circuitBreakers: rules }, options);
  }

  /** Replaces the loaded hotspot rules. @throws RuleValidationError */
  loadHotParamRules(rules: readonly HotParamRuleOptions[], options?: LoadOptions): void {
    this.loadRules({ hotParams: rules }, options);
  }

  /**
   * Replaces the loaded system rules: limits on the whole process, checked on every inbound call.
   * @throws RuleValidationError
   */
  loadSystemRules(rules: readonly SystemRuleOptions[], options?: LoadOptions): void {
    this.loadRules({ system: rules }, options);
  }

  /** Replaces the loaded authority rules. @throws RuleValidationError */
  loadAuthorityRules(rules: readonly AuthorityRuleOptions[], options?: LoadOptions): void {
    this.loadRules({ authority: rules }, options);
  }

  /**
   * Declares rules from code (decorators and middleware do this). Loaded rules for the same
   * kind and resource take precedence; removing them restores these. Returns a function that
   * withdraws the declaration. Only the resources declared are compiled again, lazily, so
   * declaring thousands of rules costs linear time.
   * @throws RuleValidationError listing every problem by path.
   */
  declareRules(rules: RuleSetOptions): () => void {
    const declaration = this.store.declare(normalizeRuleSet(rules));
    this.applied([declaration.change], 'code');
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.applied([declaration.withdraw()], 'code');
    };
  }

  /** Every rule in force, by kind, with defaults resolved. */
  getRules(): RuleSet {
    return this.store.effective();
  }

  /** Every rule known, loaded and declared, with where it came from and whether it is in force. */
  describeRules(): RuleDescription[] {
    return this.store.describe();
  }

  /**
   * For rule sources: reports a rule set that could not even be read (not JSON, an unreadable
   * file) by emitting `rulesRejected`, as a rule set failing validation does. Nothing changes.
   * @throws TypeError for a bad `options.source`.
   */
  reportRejectedRules(error: RuleValidationError, options?: LoadOptions): void {
    this.events.emit('rulesRejected', { issues: error.issues, error, source: sourceOf(options) });
  }

  /** Validates rules to load; a rejected set emits `rulesRejected` (rule sources report with it). */
  private validated<T>(normalize: () => T, source: string): T {
    try {
      return normalize();
    } catch (error) {
      if (error instanceof RuleValidationError)
        this.events.emit('rulesRejected', { issues: error.issues, error, source });
      throw error;
    }
  }

  /**
   * Announces a change and compiles what it touched: loaded rules take effect at once (so a rule
   * removed and loaded again starts afresh, and a replaced breaker stops announcing); declared
   * rules (thousands at boot) are compiled at the resource's next use, once per batch.
   */
  private applied(changes: readonly RuleChange[], source: string): void {
    const kinds = new Set<RuleKindKey>();
    const resources = new Set<string>();
    for (const change of changes) {
      for (const kind of change.kinds) kinds.add(kind);
      for (const resource of change.resources) resources.add(resource);
    }
    if ([...kinds].some((kind) => KINDS_BY_KEY.get(kind)!.scope === 'inbound')) this.compileInbound();
    if ([...kinds].some((kind) => KINDS_BY_KEY.get(kind)!.referenceOf !== undefined)) this.references = undefined;
    for (const resource of resources) {
      const state = this.resources.get(resource);
      if (state !== undefined) state.dirty = true;
      // Compiling a loaded rule creates what it needs at once (a cluster backend's limiter).
      if (source !== 'code' && resource !== '' && (state !== undefined || this.store.hasRules(resource)))
        this.stateOf(resource);
    }
    if (this.events.has('rulesLoaded')) {
      const store = this.store;
      this.events.emit('rulesLoaded', {
        get rules() {
          return store.effective();
        },
        kinds: [...kinds],
        resources: [...resources],
        source,
      });
    }
  }

  private compileInbound(): void {
    this.inbound = RULE_KINDS.map((kind) =>
      kind.scope === 'inbound'
        ? this.inboundPool.compile(kind as unknown as RuleKind, '', this.store.rulesOf(kind.key, ''), this.services)
        : undefined,
    );
    this.inboundVersion++;
    this.inboundCounted = this.inbound.some((compiled) => compiled !== undefined && compiled.checkers.length > 0);
    this.untrackedInbound = new ResourceRules(
      RULE_KINDS.map(() => ({ checkers: [] })),
      this.inbound,
    );
  }

  // ---------------------------------------------------------------- observing

  /** Adds a typed listener; returns a function that removes it. */
  on<K extends keyof FloodgateEventMap>(event: K, listener: (event: FloodgateEventMap[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** Removes a listener. */
  off<K extends keyof FloodgateEventMap>(event: K, listener: (event: FloodgateEventMap[K]) => void): void {
    this.events.off(event, listener);
  }

  /** How many times an event listener threw (each listener's first error is also a process warning). */
  get listenerErrors(): number {
    return this.events.listenerErrors;
  }

  /** A snapshot of a resource's statistics; `undefined` if the resource is not tracked. */
  stats(resource: string): ResourceStats | undefined {
    return this.resources.get(resource)?.node.snapshot(resource, this.clock.now());
  }

  /**
   * The completed seconds of a resource's minute-level window (at most the last 60), oldest
   * first, that started at or after `sinceMs`: read-only, for dashboards that chart history.
   * Empty if the resource is not tracked.
   */
  history(resource: string, sinceMs = Number.NEGATIVE_INFINITY): SecondStats[] {
    return this.resources.get(resource)?.node.completedSeconds(this.clock.now(), sinceMs) ?? [];
  }

  /** The growing counters of a resource (for metric exporters); `undefined` if it is not tracked. */
  totals(resource: string): ResourceTotals | undefined {
    return this.resources.get(resource)?.node.readTotals();
  }

  /**
   * The blocks of a resource by the rule that refused them, counted since its first block (for
   * metric exporters): `[{ kind: 'flow', ruleId: 'flow#0', count: 12 }]`. Counts survive reloads:
   * a rule keeps its id while its position among the resource's rules of its kind is unchanged.
   * `undefined` if the resource is not tracked.
   */
  blocksByRule(resource: string): RuleBlockCount[] | undefined {
    const state = this.resources.get(resource);
    if (state === undefined) return undefined;
    return state.blocks?.read() ?? [];
  }

  /**
   * A snapshot of every inbound call's statistics, all resources together (what system protection
   * reads); counted only while system rules are loaded.
   */
  inboundStats(): ResourceStats {
    return this.inboundNode.snapshot('(inbound)', this.clock.now());
  }

  /**
   * The state of each circuit breaker on a resource, in rule order (a shared breaker: the state
   * this instance enforces, from what it last learned of the shared one).
   */
  circuitState(resource: string): CircuitBreakerStatus[] {
    if (!this.resources.has(resource) && !this.store.hasRules(resource)) return [];
    const state = this.stateOf(resource);
    if (state === undefined) return [];
    const now = this.clock.now();
    const out: CircuitBreakerStatus[] = [];
    for (const wrapped of state.rules.checkers) {
      const checker = unwrapRollout(wrapped);
      if (checker instanceof CircuitBreakerChecker) out.push(checker.status(now));
      else if (checker instanceof ClusterBreakerChecker) out.push(checker.status(now));
    }
    return out;
  }

  /**
   * Each retry budget on a resource, in rule order, with the retries (and hedges) it allows now.
   * Read-only: a caller deciding whether a failed call is worth waiting a backoff for reads it
   * first, then enters the retry (`attempt: 'retry'`), which the budget may still refuse.
   */
  retryBudgets(resource: string): RetryBudgetStatus[] {
    if (!this.resources.has(resource) && !this.store.hasRules(resource)) return [];
    const state = this.stateOf(resource);
    if (state === undefined) return [];
    const now = this.clock.now();
    const out: RetryBudgetStatus[] = [];
    for (const wrapped of state.rules.checkers) {
      const checker = unwrapRollout(wrapped);
      if (checker instanceof RetryBudgetChecker) out.push({ rule: checker.rule, balance: checker.budget.balance(now) });
    }
    return out;
  }

  /**
   * What a resource's rules need from adapters: whether `enter()` may wait, and which named
   * parameters hotspot rules read. Cheap (no allocation): adapters call it per request.
   */
  resourceInfo(resource: string): ResourceInfo {
    return (this.stateOf(resource)?.rules ?? this.untrackedInbound).info;
  }

  /** The names of the tracked resources. */
  resourceNames(): string[] {
    return [...this.resources.keys()];
  }

  /**
   * The engine in JSON: how many resources it tracks and how many rules are in force. Short, so
   * that what carries an engine (`getGuardedMethods()`'s listing, a diagnostics message) prints,
   * where the engine itself would lead `JSON.stringify` round its references back to itself.
   * @example
   * JSON.stringify(getGuardedMethods(UserService)); // [{ "name": "getUser", ..., "floodgate": { "resources": 1, "rules": 2 } }]
   */
  toJSON(): { readonly resources: number; readonly rules: number } {
    const inForce = this.getRules();
    let rules = 0;
    for (const { key } of RULE_KINDS) rules += inForce[key].length;
    return { resources: this.resources.size, rules };
  }
}

/** The resources the rules in force read besides their own (see `RuleKind.referenceOf`). */
function referencedResources(rules: RuleSet): ReadonlySet<string> {
  const references = new Set<string>();
  for (const kind of RULE_KINDS as readonly RuleKind[]) {
    if (kind.referenceOf === undefined) continue;
    for (const rule of rules[kind.key as RuleKindKey] as readonly object[]) {
      const reference = kind.referenceOf(rule);
      if (reference !== undefined) references.add(reference);
    }
  }
  return references;
}

function sourceOf(options: LoadOptions | undefined): string {
  const source = options?.source ?? 'api';
  if (typeof source !== 'string' || source.length === 0 || source.length > 100) {
    throw new TypeError(
      `loadRules options.source must be a non-empty string of at most 100 characters, got ${show(source)}`,
    );
  }
  return source;
}

function replacesOf(options: LoadOptions | undefined): readonly RuleKindKey[] {
  const replaces: unknown = options?.replaces ?? [];
  if (!Array.isArray(replaces) || replaces.some((kind) => !KINDS_BY_KEY.has(kind as string))) {
    throw new TypeError(
      `loadRules options.replaces must be an array of rule kinds (${RULE_KINDS.map((kind) => kind.key).join(', ')}), got ${show(replaces)}`,
    );
  }
  return replaces as readonly RuleKindKey[];
}

function checkTimeout(timeoutMs: number | undefined): void {
  if (timeoutMs === undefined) return;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_DURATION_MS) {
    throw new RangeError(`timeoutMs must be a number > 0 and <= ${MAX_DURATION_MS}, got ${show(timeoutMs)}`);
  }
}

/** The shared engine, for code that does not make its own (decorators use it by default). */
export const floodgate = new Floodgate();
