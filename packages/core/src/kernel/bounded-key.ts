import { createHash } from 'node:crypto';

/**
 * The longest key that per-key state (a hotspot value's bucket or counter, an `'other'`
 * origin's statistics, a cluster scope) is stored under, in UTF-16 code units. With the LRUs'
 * capacities it bounds what caller-chosen keys can cost: a flood of distinct 16 KB values costs
 * no more than a flood of short ones.
 */
export const MAX_KEY_LENGTH = 128;

/**
 * `key` itself when it is at most {@link MAX_KEY_LENGTH} characters; a longer key is stored
 * under its SHA-256 digest (`'\u0000sha256:'` and 43 base64url characters), so two long keys
 * are still told apart while neither is kept whole. A short key beginning with `'\u0000'` is
 * digested too, so no caller can send a digest's spelling to share a long value's counter.
 * Hashing costs about a microsecond, and only such keys pay it.
 */
export function boundedKey(key: string): string {
  return key.length <= MAX_KEY_LENGTH && key.charCodeAt(0) !== 0
    ? key
    : `\u0000sha256:${createHash('sha256').update(key).digest('base64url')}`;
}
