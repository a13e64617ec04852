import type { ClusterThresholdType } from '@floodgate/core/cluster';
import type { StoreGate } from './store-gate';

/** What a backend gives each of its limiters. */
export interface LimiterContext {
  /** The way to the store, with timeout and breaker. */
  readonly gate: StoreGate;
  /** Prepended to every key. */
  readonly prefix: string;
  /** ARGV[1] of every script: the shared time in ms, or `''` for Redis's own clock. */
  sharedNow(): string;
  /** Local time in ms, for lease expiry and the breaker's cool-down. */
  localNow(): number;
  /**
   * The threshold in force for a rule: × the live instances for `'perInstance'`, at most
   * 2^53 − 1 (a product beyond it would make the store's counts inexact).
   */
  effectiveThreshold(threshold: number, thresholdType: ClusterThresholdType): number;
}

/**
 * The Redis key of one cluster rule's counts: `<prefix>:<kind>:{<rule key>}`, then `:<scope>`
 * for a rule that counts per scope (a hotspot value, an origin of an `'other'` rule).
 *
 * The braces are a Redis Cluster hash tag: only the text between them picks the slot, so every
 * key of one rule lives in one slot, on one shard. That is what lets one script call decide a
 * check naming several values (a hotspot rule's array argument, all or none) and a batch of
 * checks of one rule at once. The price is balance: a rule's whole traffic lands on one shard,
 * so rules spread over the shards, but one very hot rule (or one hotspot rule with a million
 * values) is served by one shard only. Braces inside the rule key are escaped (`%7B`, `%7D`,
 * with `%` as `%25`), so the tag is always the whole rule key and distinct rules keep distinct
 * keys.
 */
export function ruleKey(prefix: string, kind: 'w' | 'p' | 't' | 'b', key: string): string {
  const tag = /[{}%]/.test(key) ? key.replace(/%/g, '%25').replace(/\{/g, '%7B').replace(/\}/g, '%7D') : key;
  return `${prefix}:${kind}:{${tag}}`;
}

/** The key of `scope` within a rule whose key is `base` (`''`: the rule's one count). */
export function scopeKey(base: string, scope: string): string {
  return scope === '' ? base : `${base}:${scope}`;
}

/** Reads a reply field as a number. @throws TypeError when it is not one. */
export function replyNumber(reply: unknown, index: number): number {
  const value = Number((reply as unknown[])[index]);
  if (!Array.isArray(reply) || Number.isNaN(value))
    throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
  return value;
}
