import type { CircuitStateChangeEvent } from '../circuit-breaker/circuit-breaker-rule';
import type { ClusterUnavailableReason } from '../cluster/cluster-backend';
import type { BlockError } from '../errors/block-error';
import type { RuleIssue, RuleValidationError } from '../errors/rule-validation-error';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { RuleSet } from '../rules/rule-set';

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
}

/** The `rulesLoaded` event: the rules in force changed. */
export interface RulesLoadedEvent {
  /** Every rule now in force, by kind. */
  readonly rules: RuleSet;
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
  readonly rule: FlowRule | HotParamRule;
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
}

/** Every event a {@link Floodgate} emits, with its payload. */
export interface FloodgateEventMap {
  pass: PassEvent;
  block: BlockEvent;
  circuitStateChange: CircuitStateChangeEvent;
  rulesLoaded: RulesLoadedEvent;
  warning: WarningEvent;
  clusterFallback: ClusterFallbackEvent;
  clusterRecover: ClusterRecoverEvent;
  rulesRejected: RulesRejectedEvent;
}

/** A listener for event `K`. */
export type FloodgateListener<K extends keyof FloodgateEventMap> = (event: FloodgateEventMap[K]) => void;

/**
 * Typed listeners per event. Emitting costs one length check when nobody listens. A listener
 * that throws does not break the call that emitted: its error is reported with
 * `process.emitWarning`.
 */
export class EventHub {
  private readonly listeners: { [K in keyof FloodgateEventMap]: FloodgateListener<K>[] } = {
    pass: [],
    block: [],
    circuitStateChange: [],
    rulesLoaded: [],
    warning: [],
    clusterFallback: [],
    clusterRecover: [],
    rulesRejected: [],
  };

  /** Whether anyone listens to `name`. */
  has(name: keyof FloodgateEventMap): boolean {
    return this.listeners[name].length > 0;
  }

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof FloodgateEventMap>(name: K, listener: FloodgateListener<K>): () => void {
    const list = this.listeners[name];
    if (list === undefined) throw new TypeError(`Unknown Floodgate event ${JSON.stringify(name)} (known: ${Object.keys(this.listeners).join(', ')})`);
    if (typeof listener !== 'function') throw new TypeError(`Listener for "${name}" must be a function`);
    (this.listeners as Record<string, unknown[]>)[name] = [...list, listener];
    return () => this.off(name, listener);
  }

  /** Removes a listener. */
  off<K extends keyof FloodgateEventMap>(name: K, listener: FloodgateListener<K>): void {
    const all = this.listeners as Record<string, unknown[]>;
    all[name] = (all[name] ?? []).filter((l) => l !== listener);
  }

  /** Calls every listener of `name` with `event`. */
  emit<K extends keyof FloodgateEventMap>(name: K, event: FloodgateEventMap[K]): void {
    const list = this.listeners[name];
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(event);
      } catch (error) {
        process.emitWarning(`A Floodgate "${name}" listener threw: ${String(error)}`, { code: 'FLOODGATE_LISTENER_ERROR', detail: error instanceof Error ? error.stack : undefined });
      }
    }
  }
}
