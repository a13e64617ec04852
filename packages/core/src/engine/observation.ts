import type { Clock } from '../kernel/clock';
import type { ResourceStats, ResourceTotals, SecondStats } from '../kernel/statistic-node';
import type { RuleBlockCount } from './block-counts';
import type { PriorityCountsSnapshot } from './priority-counts';
import { RULE_KINDS, type RuleKindKey } from './kinds';
import { unwrapRollout } from './rollout';
import type { TrackedResources } from './tracked-resources';

/** Each kind's position in `RULE_KINDS`, by key. */
const KIND_INDEX: ReadonlyMap<string, number> = new Map(RULE_KINDS.map((kind, index) => [kind.key, index]));

/**
 * Observation: what the engine shows of its resources, read-only: statistics, blocks by rule, and
 * the state the rules of a kind report of themselves (each checker's `status`, such as a
 * breaker's state or a budget's balance), which the engine reads without knowing the kind.
 */
export class Observation {
  constructor(
    private readonly clock: Clock,
    private readonly resources: TrackedResources,
  ) {}

  /** See `Floodgate.stats`. */
  stats(resource: string): ResourceStats | undefined {
    return this.resources.get(resource)?.node.snapshot(resource, this.clock.now());
  }

  /** See `Floodgate.history`. */
  history(resource: string, sinceMs: number): SecondStats[] {
    return this.resources.get(resource)?.node.completedSeconds(this.clock.now(), sinceMs) ?? [];
  }

  /** See `Floodgate.totals`. */
  totals(resource: string): ResourceTotals | undefined {
    return this.resources.get(resource)?.node.readTotals();
  }

  /** See `Floodgate.blocksByRule`. */
  blocksByRule(resource: string): RuleBlockCount[] | undefined {
    const state = this.resources.get(resource);
    if (state === undefined) return undefined;
    return state.blocks?.read() ?? [];
  }

  /** See `Floodgate.priorityCounts`. */
  priorityCounts(resource: string): PriorityCountsSnapshot | undefined {
    return this.resources.get(resource)?.byPriority.read();
  }

  /** See `Floodgate.inboundStats`. */
  inboundStats(): ResourceStats {
    return this.resources.inboundNode.snapshot('(inbound)', this.clock.now());
  }

  /**
   * What each rule of `kind` on a resource reports of its state now (its checkers' `status`), in
   * rule order; empty for a resource neither tracked nor with rules.
   */
  statuses<S>(kind: RuleKindKey, resource: string): S[] {
    const state = this.resources.stateWithRules(resource);
    if (state === undefined) return [];
    const now = this.clock.now();
    const out: S[] = [];
    for (const wrapped of state.rules.byKind[KIND_INDEX.get(kind)!]!.checkers) {
      // A rule in shadow reports its state as if enforced.
      const checker = unwrapRollout(wrapped);
      if (checker.status !== undefined) out.push(checker.status(now) as S);
    }
    return out;
  }
}
