import type { Checker, CheckResult } from '../engine/checker';
import type { Entry } from '../engine/entry';
import { HotParamBlockError } from '../errors/hot-param-block-error';
import { BLOCKED, PASS } from '../flow/traffic-controller';
import { hotParamKey } from './hot-param-key';
import type { HotParamRule } from './hot-param-rule';
import { ValueChange } from './value-change';

/**
 * Checks one hotspot rule: reads the parameter value from the entry, gives it its threshold
 * (a specific item's, or the rule's) and lets the rule's mode decide per value, with the
 * per-value state in an LRU of at most `rule.capacity` values. An absent value, or one of a
 * type that is not limited (see `hotParamKey`), passes; an array passes only if each element
 * does, and a refused array charges none of its elements.
 *
 * Subclasses are the three modes: {@link HotParamRejectChecker} (token bucket),
 * {@link HotParamThrottleChecker} (pacing) and {@link HotParamConcurrencyChecker}.
 */
export abstract class HotParamChecker implements Checker {
  private readonly paramIndex: number;
  private readonly paramKey: string | undefined;
  private readonly threshold: number;
  private readonly items: ReadonlyMap<string, number> | undefined;

  /** Set by {@link HotParamChecker.take} when it refuses: ms until a retry could pass. */
  protected retryAfter: number | undefined = undefined;
  /** While an array value is checked: the changes made so far, to undo on a refusal. */
  protected journal: ValueChange[] | undefined = undefined;

  /** The per-value state (an LRU), kept across reloads while the rule is unchanged. */
  protected abstract readonly cache: { readonly size: number };

  constructor(
    /** The rule in force. */
    readonly rule: HotParamRule,
  ) {
    this.paramIndex = rule.paramIndex ?? 0;
    this.paramKey = rule.paramKey;
    this.threshold = rule.threshold;
    const keys = Object.keys(rule.specificItems);
    this.items = keys.length === 0 ? undefined : new Map(keys.map((key) => [key, rule.specificItems[key]!]));
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    const value = this.read(entry);
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return this.checkEach(entry, value, now, canWait);
    const key = hotParamKey(value);
    if (key === undefined) return undefined;
    const result = this.take(entry, key, this.thresholdOf(key), now, canWait);
    if (result === PASS) return undefined;
    if (result > 0) return result;
    return this.refuse(entry, value);
  }

  /** @internal How many values the rule tracks now (never more than `rule.capacity`). */
  trackedCount(): number {
    return this.cache.size;
  }

  /**
   * Decides one value: {@link PASS}, {@link BLOCKED} (with {@link HotParamChecker.retryAfter}
   * set), or a wait in ms (> 0, only when `canWait`) after which the call passes, its slot
   * reserved. Records each change in {@link HotParamChecker.journal} while one is open.
   */
  protected abstract take(entry: Entry, key: string, threshold: number, now: number, canWait: boolean): number;

  /** Keeps the changes of a queued call, to give them back if it is aborted. */
  protected keepForRefund(_entry: Entry, _changes: ValueChange[]): void {
    // Only pacing queues calls.
  }

  /** @internal The rule's parameter value in `entry` (the cluster checker reads it here too). */
  read(entry: Entry): unknown {
    if (this.paramKey !== undefined) return entry.params?.[this.paramKey];
    const args = entry.args;
    const index = this.paramIndex < 0 ? args.length + this.paramIndex : this.paramIndex;
    return index >= 0 ? args[index] : undefined;
  }

  /** @internal The threshold of the value counted under `key`: its specific item's, or the rule's. */
  thresholdOf(key: string): number {
    if (this.items === undefined) return this.threshold;
    const item = this.items.get(key);
    return item === undefined ? this.threshold : item;
  }

  /**
   * Each element in turn; the first refusal undoes what the earlier elements took (Sentinel
   * keeps it), so a refused call costs no value anything. Concurrency counters need no journal:
   * they are attached to the entry as they are taken, and the engine releases them on refusal.
   * The call waits for the longest of its elements' waits.
   */
  private checkEach(entry: Entry, values: readonly unknown[], now: number, canWait: boolean): CheckResult {
    const journal: ValueChange[] = [];
    this.journal = journal;
    let wait = 0;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value === undefined || value === null) continue;
      const key = hotParamKey(value);
      if (key === undefined) continue;
      const result = this.take(entry, key, this.thresholdOf(key), now, canWait);
      if (result === BLOCKED) {
        this.journal = undefined;
        ValueChange.undoAll(journal);
        return this.refuse(entry, value);
      }
      if (result > wait) wait = result;
    }
    this.journal = undefined;
    if (wait === 0) return undefined;
    this.keepForRefund(entry, journal);
    return wait;
  }

  private refuse(entry: Entry, value: unknown): HotParamBlockError {
    return new HotParamBlockError({
      resource: entry.resource,
      rule: this.rule,
      value,
      retryAfterMs: this.retryAfter,
      origin: entry.origin,
    });
  }
}
