import type { Priority } from '../kernel/priority';

/**
 * The passes and blocks of one resource by the calls' priority, from `Floodgate.priorityCounts()`,
 * in `acquireCount` units (1 per call by default). Each priority's count only grows; per kind,
 * the three priorities sum to the resource's own totals (`totals().pass`, `totals().block`).
 */
export interface PriorityCountsSnapshot {
  /** Calls admitted, by priority (those given back before they ran included, as `totals().pass`). */
  readonly passed: Readonly<Record<Priority, number>>;
  /** Calls refused, by priority, every rule together. */
  readonly blocked: Readonly<Record<Priority, number>>;
}

/**
 * Counts a resource's passes and blocks by priority, for metric exporters. Three priorities, so
 * six numbers a resource and never a label the traffic can grow. The engine bumps
 * `passed[entry.priority]` / `blocked[entry.priority]` in place: one keyed increment on an object
 * of a fixed shape a call, whatever its priority (no branch, no allocation).
 */
export class PriorityCounts {
  readonly passed: Record<Priority, number> = { critical: 0, default: 0, sheddable: 0 };
  readonly blocked: Record<Priority, number> = { critical: 0, default: 0, sheddable: 0 };

  /** A copy of the counts now. */
  read(): PriorityCountsSnapshot {
    return { passed: { ...this.passed }, blocked: { ...this.blocked } };
  }
}
