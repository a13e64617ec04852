import type { LRUCache } from 'lru-cache';
import type { Entry } from '../engine/entry';
import { BLOCKED, PASS } from '../flow/traffic-controller';
import { HotParamChecker } from './hot-param-checker';
import type { HotParamRule } from './hot-param-rule';
import { InFlightCounter } from './in-flight-counter';

/**
 * `concurrency`: calls in flight per value. A call passes while its value's count + 1 <=
 * threshold (Sentinel's `++threadCount <= threshold`: each call counts once, whatever its
 * `acquireCount`); it takes the value's counter and releases that same counter when it exits
 * or a later check refuses it. A value whose threshold is 0 is always refused. Counters are
 * kept for at most `capacity` values: an evicted value starts again from 0, while its calls in
 * flight still release the old counter.
 */
export class HotParamConcurrencyChecker extends HotParamChecker {
  constructor(
    rule: HotParamRule,
    protected override readonly cache: LRUCache<string, InFlightCounter>,
  ) {
    super(rule);
  }

  protected take(entry: Entry, key: string, threshold: number): number {
    if (threshold === 0) return BLOCKED;
    let counter = this.cache.get(key);
    if (counter === undefined) {
      counter = new InFlightCounter();
      this.cache.set(key, counter);
    }
    if (counter.inFlight >= threshold) return BLOCKED;
    counter.inFlight++;
    entry.attach(counter);
    return PASS;
  }
}
