import type { LRUCache } from 'lru-cache';
import type { ParamValueState } from './param-value-state';

/**
 * One change a QPS hotspot check made to one value's state, kept so it can be undone: when a
 * later element of an array value is refused (all elements pass or none is charged), and when
 * a queued `enter()` is aborted (its pacing slot is given back). Only these two paths allocate
 * changes; a single value's pass allocates nothing.
 */
export class ValueChange {
  /** The state as this change left it. */
  private readonly time: number;
  private readonly tokens: number;

  constructor(
    private readonly cache: LRUCache<string, ParamValueState>,
    /** The value's key when the change created its state (undo forgets the value again). */
    private readonly createdKey: string | undefined,
    private readonly state: ParamValueState,
    private readonly prevTime: number,
    private readonly prevTokens: number,
  ) {
    this.time = state.time;
    this.tokens = state.tokens;
  }

  /**
   * Undoes the changes, latest first. A change that a later call has built on (the value was
   * taken again since) is kept: giving it back would let two calls share one slot. Pacing then
   * leaves a gap instead, erring on the side of the limit.
   */
  static undoAll(changes: readonly ValueChange[]): void {
    for (let i = changes.length - 1; i >= 0; i--) changes[i]!.undo();
  }

  private undo(): void {
    const state = this.state;
    if (state.time !== this.time || state.tokens !== this.tokens) return;
    if (this.createdKey === undefined) {
      state.time = this.prevTime;
      state.tokens = this.prevTokens;
    } else if (this.cache.peek(this.createdKey) === state) {
      this.cache.delete(this.createdKey);
    }
  }
}
