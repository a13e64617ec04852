import type { CircuitBreakerStatus } from '../circuit-breaker/circuit-breaker-rule';
import { monotonicClock, type Clock } from '../clock/clock';
import type { ClusterBackend } from '../cluster/cluster-backend';
import { isBlockError, type BlockError } from '../errors/block-error';
import { RuleValidationError } from '../errors/rule-validation-error';
import type { AuthorityRuleOptions } from '../authority/authority-rule';
import type { CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import type { FlowRuleOptions } from '../flow/flow-rule';
import type { HotParamRuleOptions } from '../hot-param/hot-param-rule';
import { normalizeRuleList, normalizeRuleSet } from '../rules/normalize-rule-set';
import { RuleReader } from '../rules/rule-reader';
import { RuleRegistry } from '../rules/rule-registry';
import type { RuleKind, RuleSet, RuleSetOptions } from '../rules/rule-set';
import type { ResourceStats, StatisticNode } from '../stat/statistic-node';
import type { CheckResult } from './checker';
import { Entry, type EntryOwner } from './entry';
import { EventHub, type FloodgateEventMap, type FloodgateListener } from './events';
import { FLOODGATE_DEFAULTS } from './floodgate-defaults';
import { ResourceRules } from './resource-rules';
import { ResourceState } from './resource-state';
import { RuleCompiler, type CompiledRules } from './rule-compiler';
import { answerBlock, answerFailure, settle, type OutcomeHandlers } from './run-outcome';

/** Options of a {@link Floodgate} engine. */
export interface FloodgateOptions {
  /** Where time comes from; tests pass a `ManualClock`. @defaultValue the monotonic clock */
  readonly clock?: Clock;
  /** A shared store for cluster rules (`redisCluster()` from `@floodgate/redis`). */
  readonly cluster?: ClusterBackend;
  /**
   * Most resources tracked. Past it, new resource names without rules are neither tracked nor
   * limited, and a `warning` is emitted once. @defaultValue 6000
   */
  readonly maxResources?: number;
}

/** Options of one guarded call. */
export interface EntryOptions {
  /** The call's arguments, for hotspot rules with `paramIndex`. */
  readonly args?: readonly unknown[];
  /** Named parameters, for hotspot rules with `paramKey`. */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Tokens the call takes. @defaultValue 1 */
  readonly acquireCount?: number;
  /** Who is calling, for origin-specific flow rules and authority rules. @defaultValue '' */
  readonly origin?: string;
}

/** Options of a call that may wait (`enter`). */
export interface EnterOptions extends EntryOptions {
  /** Abandons a queued wait: the slot is given back and `enter()` rejects with the reason. */
  readonly signal?: AbortSignal;
}

/** Options of `run()`: an entry's options plus how blocks and failures are answered. */
export interface RunOptions<T> extends EnterOptions, OutcomeHandlers<T | Promise<T>> {}

/** Options of `runSync()`. */
export interface RunSyncOptions<T> extends EntryOptions, OutcomeHandlers<T> {}

const OPTION_KEYS = ['clock', 'cluster', 'maxResources'] as const;

/**
 * An isolated traffic-governance engine: statistics per resource, rules by kind, and the
 * checks authority → hotspot → flow → circuit breaker on every entry.
 *
 * @example
 * const fg = new Floodgate();
 * fg.loadRules({ flow: [{ resource: 'getUser', threshold: 100 }] });
 * const entry = fg.entry('getUser');
 * try { return getUser(); } catch (e) { entry.traceError(e); throw e; } finally { entry.exit(); }
 */
export class Floodgate implements EntryOwner {
  /** The engine's clock. */
  readonly clock: Clock;
  /** The cluster backend, if any. */
  readonly cluster: ClusterBackend | undefined;
  private readonly maxResources: number;
  private readonly events = new EventHub();
  private readonly registry = new RuleRegistry();
  private readonly compiler = new RuleCompiler();
  private readonly resources = new Map<string, ResourceState>();
  private compiled: CompiledRules = { byResource: new Map(), pinned: new Set() };
  private rules: RuleSet;
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
    if (cluster !== undefined && (typeof cluster !== 'object' || cluster === null)) {
      reader.fail('options.cluster', 'must be a cluster backend, such as redisCluster() from @floodgate/redis');
    }
    const maxResources = reader.number(obj, 'maxResources', 'options', { min: 1, integer: true }, FLOODGATE_DEFAULTS.maxResources);
    reader.throwIfAny('Invalid Floodgate options');
    this.clock = clock ?? monotonicClock;
    this.cluster = cluster;
    this.maxResources = maxResources;
    this.rules = this.registry.effective();
  }

  // ---------------------------------------------------------------- entries

  /**
   * Guards one call synchronously; never waits. Where a throttling rule would queue the call,
   * it passes only if no wait is needed.
   * @throws BlockError when a rule refuses the call.
   */
  entry(resource: string, options?: EntryOptions): Entry {
    const result = this.tryEntry(resource, options);
    if (result instanceof Entry) return result;
    throw result;
  }

  /** As {@link Floodgate.entry}, but returns the {@link BlockError} instead of throwing it. */
  tryEntry(resource: string, options?: EntryOptions): Entry | BlockError {
    return this.decideNow(this.resourceState(resource), resource, options);
  }

  /** The synchronous decision: every check at one instant, never waiting. */
  private decideNow(state: ResourceState | undefined, resource: string, options: EntryOptions | undefined): Entry | BlockError {
    const now = this.clock.now();
    const entry = this.newEntry(resource, options, state, now);
    if (state === undefined) return entry;
    const checkers = state.rules.checkers;
    for (let i = 0; i < checkers.length; i++) {
      const result = checkers[i]!.check(entry, now, false);
      if (result !== undefined) return this.refuse(entry, result as BlockError, now);
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
      const state = this.resourceState(resource);
      if (state !== undefined && state.rules.mayWait) return this.enterWaiting(state, resource, options, signal);
      const result = this.decideNow(state, resource, options);
      return result instanceof Entry ? Promise.resolve(result) : Promise.reject(result);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The decision that may wait (a throttling queue) or ask a shared store between checks. */
  private async enterWaiting(state: ResourceState, resource: string, options: EnterOptions | undefined, signal: AbortSignal | undefined): Promise<Entry> {
    let now = this.clock.now();
    const entry = this.newEntry(resource, options, state, now);
    const checkers = state.rules.checkers;
    for (let i = 0; i < checkers.length; i++) {
      const checker = checkers[i]!;
      const result: CheckResult = checker.checkAsync ? await checker.checkAsync(entry, now) : checker.check(entry, now, true);
      if (result === undefined) continue;
      if (typeof result !== 'number') throw this.refuse(entry, result, this.clock.now());
      try {
        await this.clock.sleep(result, signal);
      } catch (reason) {
        checker.refund?.(entry, now + result);
        release(entry, this.clock.now());
        throw reason;
      }
      now = this.clock.now();
    }
    entry.createdAt = now;
    this.admit(entry, now);
    return entry;
  }

  /**
   * Enters, calls `fn`, traces what it throws, and exits. A block goes to `blockHandler`, else
   * `fallback`, else is thrown; a failure goes to `fallback` (unless ignored), else is thrown.
   * @example
   * const user = await fg.run('getUser', () => api.getUser(id), { fallback: () => cached(id) });
   */
  run<T>(resource: string, fn: (entry: Entry) => T | Promise<T>, options: RunOptions<T> = {}): Promise<T> {
    try {
      const signal = options.signal;
      signal?.throwIfAborted();
      const state = this.resourceState(resource);
      if (state === undefined || !state.rules.mayWait) return Promise.resolve(this.call(this.decideNow(state, resource, options), fn, options));
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
   * promise, the entry exits (and a rejection is traced) when it settles.
   */
  runSync<T>(resource: string, fn: (entry: Entry) => T, options: RunSyncOptions<T> = {}): T {
    return this.call(this.tryEntry(resource, options), fn, options);
  }

  /** Calls `fn` in an admitted entry, or answers the block; shared by `run` and `runSync`. */
  private call<R>(admitted: Entry | BlockError, fn: (entry: Entry) => R, handlers: OutcomeHandlers<R>): R {
    if (!(admitted instanceof Entry)) return answerBlock(admitted, handlers);
    let result: R;
    try {
      result = fn(admitted);
    } catch (error) {
      return answerFailure(admitted, error, handlers);
    }
    return settle(admitted, result, handlers);
  }

  /** @internal Called by {@link Entry.exit}. */
  exitEntry(entry: Entry): void {
    const node = entry.node;
    if (node === undefined) return;
    const now = this.clock.now();
    const rtMs = now - entry.createdAt;
    const errored = entry.hasError;
    node.addExit(now, entry.acquireCount, rtMs, errored);
    node.concurrency--;
    const originNode = entry.originNode;
    if (originNode !== undefined) {
      originNode.addExit(now, entry.acquireCount, rtMs, errored);
      originNode.concurrency--;
    }
    const hooks = entry.rules!.exitHooks;
    for (let i = 0; i < hooks.length; i++) hooks[i]!.onExit(entry, now, rtMs);
    const attachments = entry.attachments;
    if (attachments !== undefined) for (let i = 0; i < attachments.length; i++) attachments[i]!.exited(entry, now, rtMs);
  }

  private newEntry(resource: string, options: EntryOptions | undefined, state: ResourceState | undefined, now: number): Entry {
    let acquireCount = 1;
    let origin = '';
    if (options !== undefined) {
      if (options.acquireCount !== undefined) {
        acquireCount = options.acquireCount;
        if (!(acquireCount >= 0)) throw new RangeError(`acquireCount must be a number >= 0, got ${String(acquireCount)}`);
      }
      if (options.origin !== undefined) origin = options.origin;
    }
    const entry = new Entry(this, resource, now, acquireCount, origin, options?.args, options?.params, state?.node, state?.rules);
    if (origin !== '' && state?.rules.originNames !== undefined) entry.originNode = state.originNode(origin);
    return entry;
  }

  private admit(entry: Entry, now: number): void {
    entry.node!.addPass(now, entry.acquireCount);
    entry.node!.concurrency++;
    const originNode = entry.originNode;
    if (originNode !== undefined) {
      originNode.addPass(now, entry.acquireCount);
      originNode.concurrency++;
    }
    if (this.events.has('pass')) this.events.emit('pass', { resource: entry.resource, origin: entry.origin, acquireCount: entry.acquireCount });
  }

  private refuse(entry: Entry, error: BlockError, now: number): BlockError {
    entry.node!.addBlock(now, entry.acquireCount);
    entry.originNode?.addBlock(now, entry.acquireCount);
    release(entry, now);
    if (this.events.has('block')) this.events.emit('block', { resource: entry.resource, origin: entry.origin, error });
    return error;
  }

  private resourceState(resource: string): ResourceState | undefined {
    const known = this.resources.get(resource);
    if (known !== undefined) return known;
    if (typeof resource !== 'string' || resource.length === 0) {
      throw new TypeError(`resource must be a non-empty string, got ${JSON.stringify(resource)}`);
    }
    if (this.resources.size >= this.maxResources && !this.compiled.pinned.has(resource)) {
      this.warnCapReached();
      return undefined;
    }
    const state = new ResourceState(resource, this.compiled.byResource.get(resource) ?? ResourceRules.EMPTY);
    this.resources.set(resource, state);
    return state;
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
   * Replaces the loaded rules of each kind given (`{ flow }` leaves breakers alone). Validates
   * everything first: on any problem nothing changes, and `rulesRejected` is emitted.
   * @throws RuleValidationError listing every problem by path.
   */
  loadRules(rules: RuleSetOptions): void {
    this.registry.load(this.validated(() => normalizeRuleSet(rules)));
    this.recompile();
  }

  /** Replaces the loaded flow rules. @throws RuleValidationError */
  loadFlowRules(rules: readonly FlowRuleOptions[]): void {
    this.loadKind('flow', rules);
  }

  /** Replaces the loaded circuit breaker rules. @throws RuleValidationError */
  loadCircuitBreakerRules(rules: readonly CircuitBreakerRuleOptions[]): void {
    this.loadKind('circuitBreakers', rules);
  }

  /** Replaces the loaded hotspot rules. @throws RuleValidationError */
  loadHotParamRules(rules: readonly HotParamRuleOptions[]): void {
    this.loadKind('hotParams', rules);
  }

  /** Replaces the loaded authority rules. @throws RuleValidationError */
  loadAuthorityRules(rules: readonly AuthorityRuleOptions[]): void {
    this.loadKind('authority', rules);
  }

  /**
   * Declares rules from code (decorators and middleware do this). Loaded rules for the same
   * kind and resource take precedence; removing them restores these. Returns a function that
   * withdraws the declaration.
   * @throws RuleValidationError listing every problem by path.
   */
  declareRules(rules: RuleSetOptions): () => void {
    const withdraw = this.registry.declare(normalizeRuleSet(rules));
    this.recompile();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      withdraw();
      this.recompile();
    };
  }

  /** Every rule in force, by kind, with defaults resolved. */
  getRules(): RuleSet {
    return this.rules;
  }

  private loadKind(kind: RuleKind, rules: unknown): void {
    this.registry.load(this.validated(() => ({ [kind]: normalizeRuleList(kind, rules) })));
    this.recompile();
  }

  /** Validates rules to load; a rejected set emits `rulesRejected` (rule sources report with it). */
  private validated<T>(normalize: () => T): T {
    try {
      return normalize();
    } catch (error) {
      if (error instanceof RuleValidationError) this.events.emit('rulesRejected', { issues: error.issues, error });
      throw error;
    }
  }

  private recompile(): void {
    this.rules = this.registry.effective();
    this.compiled = this.compiler.compile(this.rules, {
      lookupNode: (resource: string): StatisticNode | undefined => this.resources.get(resource)?.node,
      events: this.events,
      cluster: this.cluster,
    });
    for (const state of this.resources.values()) state.rules = this.compiled.byResource.get(state.name) ?? ResourceRules.EMPTY;
    this.events.emit('rulesLoaded', { rules: this.rules });
  }

  // ---------------------------------------------------------------- observing

  /** Adds a typed listener; returns a function that removes it. */
  on<K extends keyof FloodgateEventMap>(event: K, listener: FloodgateListener<K>): () => void {
    return this.events.on(event, listener);
  }

  /** Removes a listener. */
  off<K extends keyof FloodgateEventMap>(event: K, listener: FloodgateListener<K>): void {
    this.events.off(event, listener);
  }

  /** A snapshot of a resource's statistics; `undefined` if the resource is not tracked. */
  stats(resource: string): ResourceStats | undefined {
    return this.resources.get(resource)?.node.snapshot(resource, this.clock.now());
  }

  /** The state of each circuit breaker on a resource, in rule order. */
  circuitState(resource: string): CircuitBreakerStatus[] {
    const rules = this.compiled.byResource.get(resource);
    if (rules === undefined) return [];
    const now = this.clock.now();
    return rules.breakers.map((breaker) => breaker.status(now));
  }

  /** The names of the tracked resources. */
  resourceNames(): string[] {
    return [...this.resources.keys()];
  }
}

/** Undoes what checks took for an entry that will not run. */
function release(entry: Entry, now: number): void {
  const attachments = entry.attachments;
  if (attachments !== undefined) for (let i = 0; i < attachments.length; i++) attachments[i]!.blocked(entry, now);
}
