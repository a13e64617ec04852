import type { LRUCache } from 'lru-cache';
import type { Entry } from '../engine/entry';
import { BLOCKED, PASS } from '../flow/traffic-controller';
import { HotParamChecker } from './hot-param-checker';
import type { HotParamRule } from './hot-param-rule';
import { ParamValueState } from './param-value-state';
import { refillTokens } from './refill-tokens';
import { ValueChange } from './value-change';

/**
 * `qps` + `reject`: Sentinel's hotspot token bucket, one per value
 * (`ParamFlowChecker.passDefaultLocalCheck`). A bucket holds `threshold + burstCount` tokens;
 * a value seen for the first time (or again after eviction) takes from a full bucket. Tokens
 * are added only once more than `durationMs` has passed since the last refill:
 * `⌊elapsed × threshold / durationMs⌋` of them, up to the bucket's size, and the refill time
 * moves to now. A call taking more tokens than the bucket holds, or a value whose threshold is
 * 0, is always refused. A refused call takes nothing.
 */
export class HotParamRejectChecker extends HotParamChecker {
  constructor(
    rule: HotParamRule,
    protected override readonly cache: LRUCache<string, ParamValueState>,
  ) {
    super(rule);
  }

  protected take(entry: Entry, key: string, tokenCount: number, now: number): number {
    const acquire = entry.acquireCount;
    const maxTokens = tokenCount + this.rule.burstCount;
    if (tokenCount === 0 || acquire > maxTokens) {
      this.retryAfter = undefined;
      return BLOCKED;
    }
    const state = this.cache.get(key);
    if (state === undefined) {
      const fresh = new ParamValueState(now, maxTokens - acquire);
      this.cache.set(key, fresh);
      this.journal?.push(new ValueChange(this.cache, key, fresh, 0, 0));
      return PASS;
    }
    const durationMs = this.rule.durationMs;
    const elapsed = now - state.time;
    const refill = elapsed > durationMs;
    const rest = state.tokens;
    const available = refill ? refillTokens(rest, elapsed, tokenCount, maxTokens, durationMs) : rest;
    if (available < acquire) {
      this.retryAfter = retryAfterMs(acquire - rest, elapsed, tokenCount, durationMs);
      return BLOCKED;
    }
    const prevTime = state.time;
    if (refill) state.time = now;
    state.tokens = available - acquire;
    this.journal?.push(new ValueChange(this.cache, undefined, state, prevTime, rest));
    return PASS;
  }
}

/**
 * The wait until a bucket short of `missing` tokens holds enough: the refill needs more than
 * one duration since the last refill (taken as 1 ms more, the resolution Sentinel counts in),
 * and enough elapsed time for `missing` tokens.
 */
function retryAfterMs(missing: number, elapsed: number, tokenCount: number, durationMs: number): number {
  const enough = (durationMs * missing) / tokenCount;
  return (enough > durationMs ? enough : durationMs + 1) - elapsed;
}
