import type { CircuitStateChangeEvent } from '../circuit-breaker/circuit-breaker-rule';
import type { ClusterUnavailableReason } from '../kernel/cluster-contract';
import type { BlockError, RuleIssue, RuleValidationError } from '../kernel/errors';
import type { AnyRule, RuleKindKey, RuleSet } from './kinds';

/** The `pass` event: a call passed every check. */
export interface PassEvent {
  readonly resource: string;
  readonly origin: string;
  readonly acquireCount: number;
}

/** The `block` event: a call was refused. */
export interface BlockEvent {
  readonly resource: string;
  readonly origin: string;
  readonly error: BlockError;
  /**
   * The rule that refused it, named by its kind and position and never by anything the call
   * carried: `<kind>#<n>`, the n-th rule (from 0) of its kind on the resource in `getRules()`
   * order (`'flow#0'`, `'circuitBreaker#1'`); the id `blocksByRule()` counts it under.
   */
  readonly ruleId: string;
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
  readonly code: string;
  readonly message: string;
}

/**
 * The `clusterFallback` event: a cluster rule decided a call without the shared store (it was
 * slow, down, or its breaker is open), by the local rule or by letting the call pass.
 */
export interface ClusterFallbackEvent {
  readonly resource: string;
  /** The cluster rule, as it is in force. */
  readonly rule: AnyRule;
  /** The backend's name (`'redis'`). */
  readonly backend: string;
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
  readonly error: RuleValidationError;
  /** Who tried to load them (the `source` given to `loadRules`). */
  readonly source: string;
}

/** Every event a Floodgate engine emits, with its payload. */
export interface FloodgateEventMap {
  pass: PassEvent;
  block: BlockEvent;
  circuitStateChange: CircuitStateChangeEvent;
  rulesLoaded: RulesLoadedEvent;
  rulesRejected: RulesRejectedEvent;
  warning: WarningEvent;
  clusterFallback: ClusterFallbackEvent;
  clusterRecover: ClusterRecoverEvent;
}

/** A listener for event `K`. */
export type FloodgateListener<K extends keyof FloodgateEventMap> = (event: FloodgateEventMap[K]) => void;

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
} satisfies { readonly [K in keyof FloodgateEventMap]: string });
