import type { ClusterUnavailableReason } from '../cluster/cluster-contract';
import type { BlockError, RuleIssue, RuleValidationError } from '../kernel/errors';
import type { Priority } from '../kernel/priority';
import type { AnyRule, CircuitStateChangeEvent, RuleKindKey, RuleSet } from './kinds';
import type { WouldBlockEvent } from './rollout';
export type { WouldBlockEvent } from './rollout';

/** The `pass` event: a call passed every check. */
export interface PassEvent {
  /** The resource the call entered. */
  readonly resource: string;
  /** The caller's origin (`''` when the entry named none). */
  readonly origin: string;
  /** The tokens the call took. */
  readonly acquireCount: number;
  /** The call's priority (`'default'` when the entry named none), as `priorityCounts()` counts it. */
  readonly priority: Priority;
}

/** The `block` event: a call was refused. */
export interface BlockEvent {
  /** The resource the call was refused on. */
  readonly resource: string;
  /** The caller's origin (`''` when the entry named none). */
  readonly origin: string;
  /** The refusal, as the call got it (thrown, or returned by `tryEntry()`). */
  readonly error: BlockError;
  /**
   * The rule that refused it, named by its kind and position and never by anything the call
   * carried: `<kind>#<n>`, the n-th rule (from 0) of its kind on the resource in `getRules()`
   * order (`'flow#0'`, `'circuitBreaker#1'`); the id `blocksByRule()` counts it under.
   */
  readonly ruleId: string;
  /** The call's priority (`'default'` when the entry named none), as `priorityCounts()` counts it. */
  readonly priority: Priority;
}

/** The `rulesLoaded` event: the rules in force changed. */
export interface RulesLoadedEvent {
  /** Every rule now in force, by kind (built when first read). */
  readonly rules: RuleSet;
  /** The kinds whose rules changed. */
  readonly kinds: readonly RuleKindKey[];
  /** The resources whose rules changed (`''` stands for inbound kinds' rules). */
  readonly resources: readonly string[];
  /** Who changed them: `'code'` for declarations, else the `source` given to `loadRules` (`'api'` by default). */
  readonly source: string;
}

/** The `warning` event: something the operator should know (e.g. the resource cap was hit). */
export interface WarningEvent {
  /** What it is about, stable for matching: `'FLOODGATE_MAX_RESOURCES'` (the resource cap was reached), ... */
  readonly code: string;
  /** What happened and what to do, in words. */
  readonly message: string;
}

/**
 * The `clusterFallback` event: a cluster rule decided a call without the shared store (it was
 * slow, down, or its breaker is open), by the local rule or by letting the call pass.
 */
export interface ClusterFallbackEvent {
  /** The resource of the call decided without the store. */
  readonly resource: string;
  /** The cluster rule, as it is in force. */
  readonly rule: AnyRule;
  /** The backend's name (`'redis'`). */
  readonly backend: string;
  /** Why the store did not decide: `'timeout'`, `'error'`, `'notReady'` or `'breakerOpen'`. */
  readonly reason: ClusterUnavailableReason;
  /** The store's error, for `'error'`. */
  readonly error?: unknown;
  /** `'local'`: decided by the local rule (`fallbackToLocal: true`); `'pass'`: let through. */
  readonly decidedBy: 'local' | 'pass';
}

/** The `clusterRecover` event: the shared store answers again after it was declared down. */
export interface ClusterRecoverEvent {
  /** The backend's name (`'redis'`). */
  readonly backend: string;
  /** How long the store was down (its breaker open), in ms. */
  readonly downForMs: number;
}

/** The `rulesRejected` event: a rule set failed validation; the rules in force stay. */
export interface RulesRejectedEvent {
  /** Every problem, by path (`flow[2].threshold`). */
  readonly issues: readonly RuleIssue[];
  /** The error `loadRules` threw (or a rule source caught), listing the same issues. */
  readonly error: RuleValidationError;
  /** Who tried to load them (the `source` given to `loadRules`). */
  readonly source: string;
}

/** Every event a Floodgate engine emits, with its payload. */
export interface FloodgateEventMap {
  /** A call passed every check. */
  pass: PassEvent;
  /** A call was refused. */
  block: BlockEvent;
  /** A circuit breaker changed state. */
  circuitStateChange: CircuitStateChangeEvent;
  /** The rules in force changed. */
  rulesLoaded: RulesLoadedEvent;
  /** A rule set failed validation; the rules in force stay. */
  rulesRejected: RulesRejectedEvent;
  /** Something the operator should know (the resource cap was reached). */
  warning: WarningEvent;
  /** A cluster rule decided a call without the shared store. */
  clusterFallback: ClusterFallbackEvent;
  /** The shared store answers again after it was declared down. */
  clusterRecover: ClusterRecoverEvent;
  /** A rule in shadow, or beyond its `enforcePercent`, let through a call it would have refused. */
  wouldBlock: WouldBlockEvent;
}

/**
 * The `node:diagnostics_channel` channel each event is also published on, so APM agents can
 * subscribe without a dependency. Each message is `{ floodgate, event }`: the engine that
 * emitted it (a process may run several) and the event, as `on()` listeners receive it. Nothing
 * is built when nobody subscribes or listens.
 *
 * @example
 * import diagnosticsChannel from 'node:diagnostics_channel';
 * diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS.block, (message) => {
 *   const { event } = message as DiagnosticsMessage<'block'>;
 *   apm.addLabel('floodgate.blocked', event.ruleId);
 * });
 */
export const DIAGNOSTICS_CHANNELS = Object.freeze({
  pass: 'floodgate:pass',
  block: 'floodgate:block',
  circuitStateChange: 'floodgate:circuit',
  rulesLoaded: 'floodgate:rules',
  rulesRejected: 'floodgate:rules-rejected',
  warning: 'floodgate:warning',
  clusterFallback: 'floodgate:cluster-fallback',
  clusterRecover: 'floodgate:cluster-recover',
  wouldBlock: 'floodgate:would-block',
} satisfies { readonly [K in keyof FloodgateEventMap]: string });
