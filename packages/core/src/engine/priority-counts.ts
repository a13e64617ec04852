import { PRIORITIES, priorityIndex, type Priority } from '../kernel/priority';

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
 * six numbers a resource and never a label the traffic can grow. A call adds to one cell, found
 * by its priority's index (`priorityIndex`): a keyed increment by the priority's name would be a
 * lookup by three names at one site, which V8 makes megamorphic once calls of mixed priorities
 * come.
 */
export class PriorityCounts {
  /** Passes by priority index, then blocks by priority index. */
  private readonly counts = new Float64Array(2 * PRIORITIES.length);

  /** Counts `count` passes of a call of `priority`. */
  passed(priority: Priority, count: number): void {
    this.counts[priorityIndex(priority)]! += count;
  }

  /** Counts `count` blocks of a call of `priority`. */
  blocked(priority: Priority, count: number): void {
    this.counts[PRIORITIES.length + priorityIndex(priority)]! += count;
  }

  /** A copy of the counts now. */
  read(): PriorityCountsSnapshot {
    const passed = {} as Record<Priority, number>;
    const blocked = {} as Record<Priority, number>;
    for (const priority of PRIORITIES) {
      passed[priority] = this.counts[priorityIndex(priority)]!;
      blocked[priority] = this.counts[PRIORITIES.length + priorityIndex(priority)]!;
    }
    return { passed, blocked };
  }
}
