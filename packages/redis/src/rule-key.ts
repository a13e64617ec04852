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
