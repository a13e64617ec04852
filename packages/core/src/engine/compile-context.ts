import type { ClusterBackend } from '../cluster/cluster-backend';
import type { StatisticNode } from '../stat/statistic-node';
import type { EventHub } from './events';

/** What rule kinds get when their rules are compiled into checkers. */
export interface CompileContext {
  /** The statistics of a resource, if it is tracked (for `relate` flow rules). */
  lookupNode(resource: string): StatisticNode | undefined;
  /** The engine's events (circuit breakers emit `circuitStateChange`). */
  readonly events: EventHub;
  /** The cluster backend, when the engine has one. */
  readonly cluster: ClusterBackend | undefined;
  /**
   * The state object kept for an identical rule in force before this reload, or a new one from
   * `make`: reloading an unchanged rule keeps its state (breaker state, tokens, pacing).
   */
  reuse<T>(kind: string, rule: object, make: () => T): T;
}
