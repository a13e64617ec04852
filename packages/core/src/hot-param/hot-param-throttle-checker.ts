import type { LRUCache } from 'lru-cache';
import type { Entry } from '../engine/entry';
import { BLOCKED, PASS } from '../flow/traffic-controller';
import { HotParamChecker } from './hot-param-checker';
import type { HotParamRule } from './hot-param-rule';
import { ParamValueState } from './param-value-state';
import { ValueChange } from './value-change';

/**
 * `qps` + `throttle`: each value paced to one call every `durationMs × acquireCount /
 * threshold` ms (Sentinel's `passThrottleLocalCheck`). A value's first call passes; a later
 * call passes at once when the previous one is at least that long ago, else `enter()` queues
 * it for the next free slot if that is at most `maxQueueingTimeMs` away (default 0: strict
 * pacing), and a sync `entry()` refuses it. An aborted `enter()` gives its slot back.
 *
 * This is the algorithm of `flow/pacer.ts`, which it does not reuse, for two reasons. Sentinel
 * rounds the cost to whole ms and queues only while the wait is strictly below
 * `maxQueueingTimeMs`; like `Pacer`, this keeps the cost fractional and queues up to
 * `maxQueueingTimeMs` inclusive. But a `Pacer` keeps its state private, so an array value's
 * refused call could not restore it; here the per-value state is the shared
 * {@link ParamValueState}, undone through `ValueChange`. As with `Pacer`, a slot is given back
 * only while it is the queue's end, so no slot is ever given to two calls.
 */
export class HotParamThrottleChecker extends HotParamChecker {
  /** Per-value pacing makes `enter()` calls wait, when the rule allows a queue. */
  readonly mayWait: boolean;
  /** The changes of each queued call, until it is aborted or collected. */
  private readonly queued = new WeakMap<Entry, ValueChange[]>();

  constructor(
    rule: HotParamRule,
    protected override readonly cache: LRUCache<string, ParamValueState>,
  ) {
    super(rule);
    this.mayWait = rule.maxQueueingTimeMs > 0;
  }

  /** Gives back the slots of a queued `enter()` that was aborted. */
  refund(entry: Entry): void {
    const changes = this.queued.get(entry);
    if (changes === undefined) return;
    this.queued.delete(entry);
    ValueChange.undoAll(changes);
  }

  protected take(entry: Entry, key: string, tokenCount: number, now: number, canWait: boolean): number {
    if (tokenCount === 0) {
      this.retryAfter = undefined;
      return BLOCKED;
    }
    const state = this.cache.get(key);
    if (state === undefined) {
      const fresh = new ParamValueState(now, 0);
      this.cache.set(key, fresh);
      this.journal?.push(new ValueChange(this.cache, key, fresh, 0, 0));
      return PASS;
    }
    const prevTime = state.time;
    const expected = prevTime + (this.rule.durationMs * entry.acquireCount) / tokenCount;
    if (expected <= now) {
      state.time = now;
      this.journal?.push(new ValueChange(this.cache, undefined, state, prevTime, 0));
      return PASS;
    }
    const wait = expected - now;
    const maxWait = this.rule.maxQueueingTimeMs;
    if (!canWait || wait > maxWait) {
      this.retryAfter = canWait ? wait - maxWait : wait;
      return BLOCKED;
    }
    state.time = expected;
    const change = new ValueChange(this.cache, undefined, state, prevTime, 0);
    if (this.journal === undefined) this.queued.set(entry, [change]);
    else this.journal.push(change);
    return wait;
  }

  protected override keepForRefund(entry: Entry, changes: ValueChange[]): void {
    this.queued.set(entry, changes);
  }
}
