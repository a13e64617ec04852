import type { KeySource } from './key-source';
import type { Clock } from './clock';
import type { Entry } from './entry';
export type { EntryAttachment, ExitHook } from './entry';
import type { BlockError } from './errors';
import type { RuleReader } from './rule-reader';
import type { StatisticNode } from './statistic-node';

/**
 * What a check decides: `undefined` to pass, a {@link BlockError} to refuse, a wait in ms
 * (> 0, only when the caller can wait) after which the call passes, its slot reserved, or a
 * {@link HandoverWait} (only when the caller can wait): the call's place in a queue.
 */
export type CheckResult = BlockError | number | HandoverWait | undefined;

/**
 * A wait that ends when another call frees a slot, not at a time: a concurrency rule's queue.
 * The call is admitted and then awaits `handover`; the slot is the call's from the moment it
 * resolves (handed over by the call that freed it, so no other call takes it in between).
 */
export interface HandoverWait {
  /**
   * Resolves once the slot is the call's; rejects with a block error when the wait reaches its
   * deadline (or the rule leaves), or with the signal's reason when `signal` aborts. Either way
   * the call has left the queue.
   */
  handover(signal: AbortSignal | undefined): Promise<void>;
}

/** Whether a check's result is a {@link HandoverWait}. */
export function isHandoverWait(result: unknown): result is HandoverWait {
  return (
    typeof result === 'object' && result !== null && typeof (result as Partial<HandoverWait>).handover === 'function'
  );
}

/**
 * What an asynchronous check decides: as {@link CheckResult} (never a queue), or {@link DECIDE_LOCALLY} when
 * the shared store could not answer and the rule falls back to its local check, which the
 * engine then runs together with every other local check, at admission.
 */
export type AsyncCheckResult = BlockError | number | undefined | typeof DECIDE_LOCALLY;

/** See {@link AsyncCheckResult}. */
export const DECIDE_LOCALLY: unique symbol = Symbol('floodgate.decideLocally');

/**
 * One rule's check on one resource (or, for inbound kinds, on every inbound call). The engine
 * runs the checks of every kind in the fixed order authority → system → hotspot → flow →
 * circuit breaker; the first refusal wins, and whatever earlier checks took is given back.
 */
export interface Checker {
  /**
   * Whether {@link Checker.check} may return a wait when the caller can wait (a throttling
   * rule). Resources none of whose checkers wait or decide asynchronously are entered by
   * `enter()` and `run()` through the synchronous path, without an extra promise turn.
   */
  readonly mayWait?: boolean;
  /**
   * Decides synchronously; `canWait` is false for `entry()`/`tryEntry()`. A check that takes
   * something (a token, a pacing slot, a counter) attaches to the entry what gives it back.
   */
  check(entry: Entry, now: number, canWait: boolean): CheckResult;
  /**
   * Asks a shared store first, for `enter()` and `run()` (cluster rules). Never rejects. The
   * engine awaits every such check before it runs the synchronous ones, so the local decisions
   * and the admission happen in one turn of the event loop and no concurrent call can slip
   * between them.
   */
  checkAsync?(entry: Entry, now: number): Promise<AsyncCheckResult>;
  /** Told of every completed call that passed (circuit breakers record it here). */
  onExit?(entry: Entry, now: number, rtMs: number): void;
  /**
   * What the rule reports of its state at `now`, for observers, read-only: a breaker's state
   * (`Floodgate.circuitState()`), a retry budget's balance (`retryBudgets()`). The engine lists
   * the statuses of a kind's checkers without knowing the kind.
   */
  status?(now: number): object;
}

/** Where engine events go; rule kinds announce their own (circuit breakers: `circuitStateChange`). */
export interface EventSink {
  /** Whether anyone listens to `name` (so an event's payload need not be built). */
  has(name: string): boolean;
  emit(name: string, event: object): void;
}

/**
 * What the engine offers a kind's {@link RuleKind.services} hook, once per engine: what is the
 * engine's, whatever the kind.
 */
export interface EngineResources {
  /**
   * The engine's options, validated and with their defaults resolved (`Floodgate` documents
   * each): a kind reads those it needs (system protection: `probe`).
   */
  readonly options: { readonly [name: string]: unknown };
  /**
   * The statistics of every inbound call, all resources together, counted while an inbound
   * kind has rules.
   */
  readonly inbound: StatisticNode;
}

/**
 * What a rule kind gets when its rules are compiled into checkers. `S` is what the kind's own
 * {@link RuleKind.services} hook made of the engine (`undefined` for a kind without one).
 */
export interface CompileContext<S = unknown> {
  /** The resource whose rules are compiled (`''` for inbound kinds). */
  readonly resource: string;
  /** The engine's clock. */
  readonly clock: Clock;
  /** The engine's source of random numbers in [0, 1) (adaptive throttling). */
  readonly random: () => number;
  /** The engine's events. */
  readonly events: EventSink;
  /** What the kind's `services` hook returned for this engine. */
  readonly services: S;
  /** The statistics of a resource, if it is tracked (for `relate` flow rules). */
  lookupNode(resource: string): StatisticNode | undefined;
  /**
   * The state kept for an identical rule of this kind and resource in force before this
   * compilation, or a new one from `make`: reloading an unchanged rule keeps its state (breaker
   * state, tokens, pacing). State objects with a `retire()` method are told when their rule
   * leaves.
   */
  reuse<T>(rule: object, make: () => T): T;
}

/** What one kind's rules on one resource compile to. */
export interface CompiledRules {
  /** The checks, in the kind's order. */
  readonly checkers: readonly Checker[];
  /**
   * Origins whose statistics the checks read: the named ones (kept for good) and whether any
   * other origin is counted on its own (kept in a bounded LRU).
   */
  readonly origins?: { readonly named: ReadonlySet<string>; readonly other: boolean };
  /** The `params` keys the checks read, so adapters know to capture them. */
  readonly paramKeys?: readonly string[];
  /** The key sources the checks read (each once), so adapters read only those parts of a request. */
  readonly keySources?: readonly KeySource[];
}

/**
 * A kind of rule: everything the engine needs to validate, store and enforce it. Each kind is one
 * folder (its rule type, defaults, validation, checker and block error) that imports only the
 * kernel (and, for kinds whose rules may be shared, the cluster contract, whose `ClusterKind`
 * adds the binding); the engine holds the list of kinds in check order. `K` is the kind's key in
 * a rule set, `R` its rule in force, `O` its rule as users write it, `S` what its `services`
 * hook makes of the engine.
 */
export interface RuleKind<K extends string = string, R extends object = object, O = unknown, S = unknown> {
  /** The kind's key in rule sets: `loadRules({ [key]: [...] })`, `getRules()`, `describeRules()`. */
  readonly key: K;
  /**
   * The kind's name in the singular (`'hotParam'` for `hotParams`): the `kind` of its block
   * errors, its rule ids (`hotParam#0`), and the metric labels and dashboard views built on them.
   */
  readonly name: string;
  /**
   * The option under which HTTP routes (and gRPC methods) take a rule of this kind:
   * `'rateLimit'` for flow rules, `'circuitBreaker'`, `'hotParam'`; absent for kinds they do not
   * take per route.
   */
  readonly routeOption?: string;
  /**
   * `'resource'`: each rule names a resource and checks its calls. `'inbound'`: the rules check
   * every inbound call, whatever its resource (system protection).
   */
  readonly scope: 'resource' | 'inbound';
  /** The codes of the errors this kind throws, each with what it means. */
  readonly codes: Readonly<Record<string, string>>;
  /**
   * Validates one rule and resolves its defaults; problems go to `reader`, and the result is only
   * meaningful when none were found.
   */
  normalize(input: unknown, path: string, reader: RuleReader): R | undefined;
  /** The resource a rule applies to (`''` for inbound kinds). */
  resourceOf(rule: R): string;
  /**
   * What the kind's checkers need of the engine beyond the compile context, made once per
   * engine, at its construction, and given to every compilation as `ctx.services` (system
   * protection: the engine's probe and the inbound statistics). Kinds that need nothing more
   * leave it out.
   */
  services?(engine: EngineResources): S;
  /** Compiles the rules of one resource (inbound kinds: all of them) into checkers. */
  compile(rules: readonly R[], ctx: CompileContext<S>): CompiledRules;
  /**
   * Another resource whose statistics the rule reads (flow's `relate`), if any: the engine
   * tracks it whatever the resource cap, from the moment the rule is in force.
   */
  referenceOf?(rule: R): string | undefined;
  /** Type-only: the rule as users write it. Never set. */
  readonly optionsType?: O;
}
