import type { LRUCache } from 'lru-cache';
import { boundedKey } from '../kernel/bounded-key';
import type { Entry } from '../kernel/entry';
import { keyMatcher, keySourceId } from '../kernel/key-source';
import type { Checker, CheckResult, EntryAttachment } from '../kernel/rule-kind';
import { HotParamBlockError, type HotParamRule } from './hot-param-rule';
import { refillTokens } from './refill-tokens';

/** {@link HotParamChecker.take}: the value passes now. */
const PASS = 0;
/** {@link HotParamChecker.take}: the value is refused. */
const BLOCKED = -1;

/**
 * The key a parameter value is counted under: the string form of a string, number, bigint or
 * boolean (so `42`, `42n` and `'42'` are one value, and JSON-loaded `specificItems` match
 * numeric arguments); `undefined` for any other type, which hotspot rules do not limit.
 *
 * Objects, symbols and functions are left alone on purpose: their identity does not repeat
 * across requests (each request parses a new object), so counting them would only fill the
 * LRU, and their string forms (`[object Object]`) would lump unrelated values together.
 *
 * A string longer than 128 characters is counted under its digest (see `boundedKey`), so the
 * LRU's `capacity` bounds its memory whatever the values' length.
 */
export function hotParamKey(value: unknown): string | undefined {
  // Each `typeof value === '…'` compiles to a check of the value's type; a `switch` on
  // `typeof value` builds the type's name first (V8's Typeof builtin, on every hotspot call).
  if (typeof value === 'string') return boundedKey(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return undefined;
}

/** The values of `value` (one, or an array) that `matches` counts; `undefined` when none. */
function matching(value: unknown, matches: (value: string) => boolean): unknown {
  if (Array.isArray(value)) {
    const kept = value.filter((item) => typeof item !== 'string' || matches(item));
    return kept.length === 0 ? undefined : kept;
  }
  return typeof value === 'string' && !matches(value) ? undefined : value;
}

/**
 * The state a QPS hotspot rule keeps for one value: one small object per value in one LRU
 * (Sentinel keeps two maps, times and tokens; one object halves the lookups and the entries).
 */
export class ParamValueState {
  constructor(
    /**
     * `reject`: when tokens were last added (clock ms). `throttle`: when the latest admitted
     * call is due (the end of the pacing queue).
     */
    public time: number,
    /** `reject`: the tokens left. Unused by `throttle` (0). */
    public tokens: number,
  ) {}
}

/**
 * Calls in flight for one value of a concurrency hotspot rule. The counter is itself the
 * entry's attachment: each admitted call holds the very object it incremented and decrements
 * it when its work has settled (a call answered by its timeout holds it until then) or when it
 * does not run, even after the LRU has evicted the value (a value seen again after eviction gets
 * a fresh counter, which old calls never touch).
 */
export class InFlightCounter implements EntryAttachment {
  /** Calls admitted whose work has not settled. */
  inFlight = 0;

  exited(): void {
    // Still running until freed.
  }

  freed(): void {
    this.inFlight--;
  }

  released(): void {
    this.inFlight--;
  }
}

/**
 * Checks one hotspot rule: reads the parameter value from the entry, gives it its threshold
 * (a specific item's, or the rule's) and lets the rule's mode decide per value, with the
 * per-value state in an LRU of at most `rule.capacity` values. An absent value, or one of a
 * type that is not limited (see {@link hotParamKey}), passes; an array passes only if each
 * element does. What each value took is attached to the entry, so a call that does not run
 * (refused by a later element or check, cancelled, or aborted in a queue) takes nothing.
 *
 * Subclasses are the three modes: {@link HotParamRejectChecker} (token bucket),
 * {@link HotParamThrottleChecker} (pacing) and {@link HotParamConcurrencyChecker}.
 */
export abstract class HotParamChecker implements Checker {
  private readonly paramIndex: number;
  private readonly paramKey: string | undefined;
  /** The entry's `keys` entry a `key` rule reads, and its match. */
  private readonly keyId: string | undefined;
  private readonly matches: ((value: string) => boolean) | undefined;
  private readonly threshold: number;
  private readonly items: ReadonlyMap<string, number> | undefined;

  /** Set by {@link HotParamChecker.take} when it refuses: ms until a retry could pass. */
  protected retryAfter: number | undefined = undefined;

  /** The per-value state (an LRU), kept across reloads while the rule is unchanged. */
  protected abstract readonly cache: { readonly size: number };

  constructor(
    /** The rule in force. */
    readonly rule: HotParamRule,
  ) {
    this.paramIndex = rule.paramIndex ?? 0;
    this.paramKey = rule.paramKey;
    this.keyId = rule.key === undefined ? undefined : keySourceId(rule.key);
    this.matches = rule.key?.match === undefined ? undefined : keyMatcher(rule.key.match);
    this.threshold = rule.threshold;
    const keys = Object.keys(rule.specificItems);
    this.items =
      keys.length === 0 ? undefined : new Map(keys.map((key) => [boundedKey(key), rule.specificItems[key]!]));
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

  /** How many values the rule tracks now (never more than `rule.capacity`). */
  trackedCount(): number {
    return this.cache.size;
  }

  /**
   * Decides one value: {@link PASS}, {@link BLOCKED} (with {@link HotParamChecker.retryAfter}
   * set), or a wait in ms (> 0, only when `canWait`) after which the call passes, its slot
   * reserved. Attaches to the entry what gives the value's share back.
   */
  protected abstract take(entry: Entry, key: string, threshold: number, now: number, canWait: boolean): number;

  /** The rule's parameter value in `entry` (the cluster binding reads it here too). */
  read(entry: Entry): unknown {
    if (this.keyId !== undefined) {
      const value = entry.keys?.[this.keyId];
      return this.matches === undefined ? value : matching(value, this.matches);
    }
    if (this.paramKey !== undefined) return entry.params?.[this.paramKey];
    const args = entry.args;
    const index = this.paramIndex < 0 ? args.length + this.paramIndex : this.paramIndex;
    return index >= 0 ? args[index] : undefined;
  }

  /** The threshold of the value counted under `key`: its specific item's, or the rule's. */
  thresholdOf(key: string): number {
    if (this.items === undefined) return this.threshold;
    const item = this.items.get(key);
    return item === undefined ? this.threshold : item;
  }

  /**
   * Each element in turn; the first refusal refuses the call, and the engine then gives back
   * what the earlier elements took (Sentinel keeps it), so a refused call costs no value
   * anything. The call waits for the longest of its elements' waits.
   */
  private checkEach(entry: Entry, values: readonly unknown[], now: number, canWait: boolean): CheckResult {
    let wait = 0;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value === undefined || value === null) continue;
      const key = hotParamKey(value);
      if (key === undefined) continue;
      const result = this.take(entry, key, this.thresholdOf(key), now, canWait);
      if (result === BLOCKED) return this.refuse(entry, value);
      if (result > wait) wait = result;
    }
    return wait === 0 ? undefined : wait;
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

/**
 * `qps` + `reject`: Sentinel's hotspot token bucket, one per value
 * (`ParamFlowChecker.passDefaultLocalCheck`). A bucket holds `threshold + burstCount` tokens;
 * a value seen for the first time (or again after eviction) takes from a full bucket. Tokens
 * are added only once more than `durationMs` has passed since the last refill:
 * `⌊elapsed × threshold / durationMs⌋` of them, up to the bucket's size, and the refill time
 * moves to now. A call taking more tokens than the bucket holds, or a value whose threshold is
 * 0, is always refused. A refused call takes nothing; a call that does not run gives its tokens
 * back while the bucket has not been refilled since.
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
      entry.attach(new TokenRefund(fresh, acquire, maxTokens, this.cache, key));
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
    if (refill) state.time = now;
    state.tokens = available - acquire;
    if (acquire > 0) entry.attach(new TokenRefund(state, acquire, maxTokens, undefined, undefined));
    return PASS;
  }
}

/**
 * Forgets a value a refused call saw first, unless it is the only one tracked: lru-cache
 * clears itself to delete its last entry, writing over all `capacity` slots, which would make
 * every refused call cost O(capacity) when refusals keep the cache near empty (a flood refused
 * by a later rule). Returns false when the value stays (its state is then to be reset).
 */
function forget<V extends object>(cache: LRUCache<string, V>, key: string): boolean {
  if (cache.size <= 1) return false;
  cache.delete(key);
  return true;
}

/**
 * Tokens a call took from a value's bucket, given back if the call does not run. A value the
 * call saw first is forgotten again while nothing else touched it, so refused calls cannot fill
 * the LRU with new values (and evict the state of values in use).
 */
class TokenRefund implements EntryAttachment {
  private readonly takenAt: number;
  private readonly left: number;

  constructor(
    private readonly state: ParamValueState,
    private readonly tokens: number,
    private readonly maxTokens: number,
    private readonly cache: LRUCache<string, ParamValueState> | undefined,
    private readonly createdKey: string | undefined,
  ) {
    this.takenAt = state.time;
    this.left = state.tokens;
  }

  exited(): void {
    // The call ran: its tokens were spent.
  }

  /** Only within the refill period the tokens were taken in: a later refill already counted them. */
  released(): void {
    const state = this.state;
    if (state.time !== this.takenAt) return;
    if (
      this.createdKey !== undefined &&
      state.tokens === this.left &&
      this.cache!.peek(this.createdKey) === state &&
      forget(this.cache!, this.createdKey)
    )
      return;
    state.tokens = Math.min(state.tokens + this.tokens, this.maxTokens);
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

/**
 * `qps` + `throttle`: each value paced to one call every `durationMs × acquireCount /
 * threshold` ms (Sentinel's `passThrottleLocalCheck`). A value's first call passes; a later
 * call passes at once when the previous one is at least that long ago, else `enter()` queues
 * it for the next free slot if that is at most `maxQueueingTimeMs` away (default 0: strict
 * pacing), and a sync `entry()` refuses it. Sentinel rounds the cost to whole ms and queues
 * only while the wait is strictly below `maxQueueingTimeMs`; this keeps the cost fractional and
 * queues up to `maxQueueingTimeMs` inclusive, as flow pacing does. A call that does not run
 * gives its slot back while it is the value's latest, so no slot is ever given to two calls.
 */
export class HotParamThrottleChecker extends HotParamChecker {
  /** Per-value pacing makes `enter()` calls wait, when the rule allows a queue. */
  readonly mayWait: boolean;

  constructor(
    rule: HotParamRule,
    protected override readonly cache: LRUCache<string, ParamValueState>,
  ) {
    super(rule);
    this.mayWait = rule.maxQueueingTimeMs > 0;
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
      entry.attach(new PaceRefund(fresh, Number.NEGATIVE_INFINITY, this.cache, key));
      return PASS;
    }
    const prevTime = state.time;
    const expected = prevTime + (this.rule.durationMs * entry.acquireCount) / tokenCount;
    if (expected <= now) {
      state.time = now;
      entry.attach(new PaceRefund(state, prevTime, undefined, undefined));
      return PASS;
    }
    const wait = expected - now;
    const maxWait = this.rule.maxQueueingTimeMs;
    // `!(wait <= maxWait)`: a wait that is not a number refuses (`NaN > maxWait` is false).
    if (!canWait || !(wait <= maxWait)) {
      this.retryAfter = canWait ? wait - maxWait : wait;
      return BLOCKED;
    }
    state.time = expected;
    entry.attach(new PaceRefund(state, prevTime, undefined, undefined));
    return wait;
  }
}

/**
 * A value's pacing slot a call took, given back if the call does not run and no later call took
 * one; a value the call saw first is forgotten again.
 */
class PaceRefund implements EntryAttachment {
  private readonly slot: number;

  constructor(
    private readonly state: ParamValueState,
    private readonly before: number,
    private readonly cache: LRUCache<string, ParamValueState> | undefined,
    private readonly createdKey: string | undefined,
  ) {
    this.slot = state.time;
  }

  exited(): void {
    // The call ran in its slot.
  }

  released(): void {
    if (this.state.time !== this.slot) return;
    if (
      this.createdKey !== undefined &&
      this.cache!.peek(this.createdKey) === this.state &&
      forget(this.cache!, this.createdKey)
    )
      return;
    this.state.time = this.before;
  }
}

/**
 * `concurrency`: calls in flight per value. A call passes while its value's count + 1 <=
 * threshold (Sentinel's `++threadCount <= threshold`: each call counts once, whatever its
 * `acquireCount`); it takes the value's counter and releases that same counter when it ends.
 * A value whose threshold is 0 is always refused. Counters are kept for at most `capacity`
 * values: an evicted value starts again from 0, while its calls in flight still release the
 * old counter.
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
