import type { Clock } from '../kernel/clock';
import type { ClusterBackend } from '../cluster/cluster-contract';
import { Entry } from '../kernel/entry';
import type { BlockError, RuleValidationError } from '../kernel/errors';
import { EventHub } from '../kernel/events';
import type { ResourceStats, ResourceTotals, SecondStats } from '../kernel/statistic-node';
import { Admission, type EnterOptions, type EntryOptions, type RunOptions, type RunSyncOptions } from './admission';
import type { RuleBlockCount, RulesOf } from './block-counts';
import type { PriorityCountsSnapshot } from './priority-counts';
import { resolveFloodgateOptions, type FloodgateOptions } from './engine-options';
import { DIAGNOSTICS_CHANNELS, type FloodgateEventMap } from './events';
import {
  RULE_KINDS,
  type AuthorityRuleOptions,
  type CircuitBreakerRuleOptions,
  type CircuitBreakerStatus,
  type FlowRuleOptions,
  type HotParamRuleOptions,
  type RetryBudgetStatus,
  type RuleKindKey,
  type RuleSet,
  type RuleSetOptions,
  type SystemProbe,
  type SystemRuleOptions,
} from './kinds';
import { Observation } from './observation';
import type { ResourceInfo } from './resource-state';
import { RuleManagement, type LoadOptions } from './rule-management';
import { RuleStore, type RuleDescription } from './rule-store';
import { TrackedResources } from './tracked-resources';

/** The options of a `run()` or `runSync()` given none: shared, so such a call allocates none. */
const NO_OPTIONS: RunOptions<never> & RunSyncOptions<never> = Object.freeze({});

export type { FloodgateOptions } from './engine-options';
export type { EnterOptions, EntryOptions, RunOptions, RunSyncOptions } from './admission';
export type { LoadOptions } from './rule-management';

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

/**
 * An isolated traffic-governance engine: statistics per resource, rules by kind, and the
 * checks authority → system → hotspot → flow → circuit breaker on every entry.
 *
 * A facade: admission (`engine/admission.ts`, with `Entry` owning what a call takes and gives
 * back), rule management (`engine/rule-management.ts`) and observation
 * (`engine/observation.ts`) over the tracked resources (`engine/tracked-resources.ts`).
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
  private readonly events = new EventHub<FloodgateEventMap>(DIAGNOSTICS_CHANNELS, this);
  private readonly store = new RuleStore();
  private readonly resources: TrackedResources;
  private readonly admission: Admission;
  private readonly rules: RuleManagement;
  private readonly observation: Observation;

  /** @throws RuleValidationError when an option is unknown or has a wrong value. */
  constructor(options: FloodgateOptions = {}) {
    const resolved = resolveFloodgateOptions(options);
    this.clock = resolved.clock;
    this.cluster = resolved.cluster;
    this.probe = resolved.probe;
    this.random = resolved.random;
    const store = this.store;
    // The rules in force of a kind on a resource, for naming the rule of a block.
    const rulesOf: RulesOf = (kind, resource) => store.rulesOf(kind.key as RuleKindKey, resource);
    this.resources = new TrackedResources(resolved, store, this.events, rulesOf);
    this.admission = new Admission(this.clock, this.resources, this.events, rulesOf);
    this.rules = new RuleManagement(store, this.resources, this.events);
    this.observation = new Observation(this.clock, this.resources);
  }

  // ---------------------------------------------------------------- admission

  /**
   * Guards one call synchronously; never waits. Where a throttling rule would queue the call,
   * it passes only if no wait is needed; cluster rules decide from leased tokens or locally.
   * @throws BlockError when a rule refuses the call.
   * @throws TypeError for a bad resource name; RangeError for a bad `acquireCount`.
   */
  entry(resource: string, options?: EntryOptions): Entry {
    const result = this.admission.tryEntry(resource, options);
    if (result instanceof Entry) return result;
    throw result;
  }

  /** As {@link Floodgate.entry}, but returns the {@link BlockError} instead of throwing it. */
  tryEntry(resource: string, options?: EntryOptions): Entry | BlockError {
    return this.admission.tryEntry(resource, options);
  }

  /**
   * Guards one call, waiting (through the clock) where a throttling rule queues it, up to the
   * rule's `maxQueueingTimeMs`; cluster rules consult the shared store here.
   * @throws BlockError when a rule refuses the call; the signal's reason when it aborts.
   */
  enter(resource: string, options?: EnterOptions): Promise<Entry> {
    return this.admission.enter(resource, options);
  }

  /**
   * As {@link Floodgate.enter}, answering at once when the call need not wait: the entry or the
   * block, synchronously; a promise only when a rule queues or paces the call, or asks a shared
   * store. `waitSignal` is called, once, only then: its signal abandons the wait (the HTTP guard
   * makes a request's signal only for a request that waits). Throws what `entry()` throws.
   * @internal
   */
  enterOrWait(
    resource: string,
    options: EntryOptions | undefined,
    waitSignal: () => AbortSignal | undefined,
  ): Entry | BlockError | Promise<Entry> {
    return this.admission.enterOrWait(resource, options, waitSignal);
  }

  /**
   * Enters, calls `fn`, traces what it throws, and exits. A block goes to `blockHandler`, else
   * `fallback`, else is thrown; a failure (or a timeout) goes to `fallback` (unless ignored),
   * else is thrown. `fn` gets the entry and an `AbortSignal` that aborts when `timeoutMs` passes
   * (or when `options.signal` aborts), and is called with `thisArg` as its `this` (as
   * `Function.prototype.call` would: the decorators pass the instance, instead of a closure per call).
   * @example
   * const user = await fg.run('getUser', (entry, signal) => api.getUser(id, { signal }), {
   *   timeoutMs: 2000,
   *   fallback: () => cached(id),
   * });
   */
  run<T>(
    resource: string,
    fn: (entry: Entry, signal: AbortSignal | undefined) => T | Promise<T>,
    options: RunOptions<T> = NO_OPTIONS,
    thisArg?: unknown,
  ): Promise<T> {
    return this.admission.run(resource, fn, options, thisArg);
  }

  /**
   * As {@link Floodgate.run} without waiting: returns what `fn` returns. When `fn` returns a
   * promise, the entry exits (and a rejection is traced) when it settles, or at `timeoutMs`.
   * `fn` is called with `thisArg` as its `this`, as in `run()`.
   */
  runSync<T>(
    resource: string,
    fn: (entry: Entry, signal: AbortSignal | undefined) => T,
    options: RunSyncOptions<T> = NO_OPTIONS,
    thisArg?: unknown,
  ): T {
    return this.admission.runSync(resource, fn, options, thisArg);
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
    return this.rules.load(rules, options);
  }

  // The shorthands below are `loadRules` for one kind, kept for the kinds that had them; a new
  // kind gets none (`loadRules({ [key]: rules })` serves every kind).

  /** Replaces the loaded flow rules. @throws RuleValidationError */
  loadFlowRules(rules: readonly FlowRuleOptions[], options?: LoadOptions): void {
    this.rules.load({ flow: rules }, options);
  }

  /** Replaces the loaded circuit breaker rules. @throws RuleValidationError */
  loadCircuitBreakerRules(rules: readonly CircuitBreakerRuleOptions[], options?: LoadOptions): void {
    this.rules.load({ circuitBreakers: rules }, options);
  }

  /** Replaces the loaded hotspot rules. @throws RuleValidationError */
  loadHotParamRules(rules: readonly HotParamRuleOptions[], options?: LoadOptions): void {
    this.rules.load({ hotParams: rules }, options);
  }

  /**
   * Replaces the loaded system rules: limits on the whole process, checked on every inbound call.
   * @throws RuleValidationError
   */
  loadSystemRules(rules: readonly SystemRuleOptions[], options?: LoadOptions): void {
    this.rules.load({ system: rules }, options);
  }

  /** Replaces the loaded authority rules. @throws RuleValidationError */
  loadAuthorityRules(rules: readonly AuthorityRuleOptions[], options?: LoadOptions): void {
    this.rules.load({ authority: rules }, options);
  }

  /**
   * Declares rules from code (decorators and middleware do this). Loaded rules for the same
   * kind and resource take precedence; removing them restores these. Returns a function that
   * withdraws the declaration. Only the resources declared are compiled again, lazily, so
   * declaring thousands of rules costs linear time.
   * @throws RuleValidationError listing every problem by path.
   */
  declareRules(rules: RuleSetOptions): () => void {
    return this.rules.declare(rules);
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
    this.rules.reportRejected(error, options);
  }

  // ---------------------------------------------------------------- observation

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
    return this.observation.stats(resource);
  }

  /**
   * The completed seconds of a resource's minute-level window (at most the last 60), oldest
   * first, that started at or after `sinceMs`: read-only, for dashboards that chart history.
   * Empty if the resource is not tracked.
   */
  history(resource: string, sinceMs = Number.NEGATIVE_INFINITY): SecondStats[] {
    return this.observation.history(resource, sinceMs);
  }

  /** The growing counters of a resource (for metric exporters); `undefined` if it is not tracked. */
  totals(resource: string): ResourceTotals | undefined {
    return this.observation.totals(resource);
  }

  /**
   * The blocks of a resource by the rule that refused them, counted since its first block (for
   * metric exporters): `[{ kind: 'flow', ruleId: 'flow#0', count: 12 }]`. Counts survive reloads:
   * a rule keeps its id while its position among the resource's rules of its kind is unchanged.
   * `undefined` if the resource is not tracked.
   */
  blocksByRule(resource: string): RuleBlockCount[] | undefined {
    return this.observation.blocksByRule(resource);
  }

  /**
   * The passes and blocks of a resource by the calls' priority (`EntryOptions.priority`), counted
   * since it was first tracked (for metric exporters): `{ passed: { critical: 3, default: 90,
   * sheddable: 7 }, blocked: { critical: 0, default: 2, sheddable: 41 } }`. Per kind the three sum
   * to `totals()`' `pass` and `block`. `undefined` if the resource is not tracked.
   */
  priorityCounts(resource: string): PriorityCountsSnapshot | undefined {
    return this.observation.priorityCounts(resource);
  }

  /**
   * A snapshot of every inbound call's statistics, all resources together (what system protection
   * reads); counted only while system rules are loaded.
   */
  inboundStats(): ResourceStats {
    return this.observation.inboundStats();
  }

  /**
   * The state of each circuit breaker on a resource, in rule order (a shared breaker: the state
   * this instance enforces, from what it last learned of the shared one).
   */
  circuitState(resource: string): CircuitBreakerStatus[] {
    return this.observation.statuses<CircuitBreakerStatus>('circuitBreakers', resource);
  }

  /**
   * Each retry budget on a resource, in rule order, with the retries (and hedges) it allows now.
   * Read-only: a caller deciding whether a failed call is worth waiting a backoff for reads it
   * first, then enters the retry (`attempt: 'retry'`), which the budget may still refuse.
   */
  retryBudgets(resource: string): RetryBudgetStatus[] {
    return this.observation.statuses<RetryBudgetStatus>('retryBudgets', resource);
  }

  /**
   * What a resource's rules need from adapters: whether `enter()` may wait, and which named
   * parameters hotspot rules read. Cheap (no allocation): adapters call it per request.
   */
  resourceInfo(resource: string): ResourceInfo {
    return this.resources.infoOf(resource);
  }

  /** The names of the tracked resources. */
  resourceNames(): string[] {
    return this.resources.names();
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

/** The shared engine, for code that does not make its own (decorators use it by default). */
export const floodgate = new Floodgate();
