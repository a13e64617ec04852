import type { BlockError, QuotaPolicy } from '../kernel/errors';

/**
 * The form of the IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers):
 * - `'draft-6'`: `RateLimit-Policy: 10;w=1` and `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`;
 * - `'draft-7'`: `RateLimit-Policy: 10;w=1` and `RateLimit: limit=10, remaining=0, reset=1`;
 * - `'draft-8'`: `RateLimit-Policy: "flow";q=10;w=1` and `RateLimit: "flow";r=0;t=1`.
 */
export type RateLimitHeadersDraft = 'draft-6' | 'draft-7' | 'draft-8';

/**
 * The greatest number written in `Retry-After` and the RateLimit headers: 2^31 − 1 (in seconds,
 * about 68 years). Every number in those headers is a whole number within [0, MAX_HEADER_VALUE]:
 * a larger wait, quota or window is written as this bound. It is RFC 9111's bound for
 * delta-seconds (§1.2.2: a recipient takes a larger value as 2^31), within the 15 digits of a
 * structured-field integer (RFC 8941), which the draft-8 headers are, and within a signed 32-bit
 * integer, so any client can parse it.
 */
export const MAX_HEADER_VALUE = 2 ** 31 - 1;

/** `value` as a header number: rounded down, within [0, {@link MAX_HEADER_VALUE}] (`NaN` as 0). */
export function headerNumber(value: number): number {
  return value >= 0 ? Math.min(Math.floor(value), MAX_HEADER_VALUE) : 0;
}

/**
 * A wait in ms as the whole seconds of `Retry-After` and a RateLimit reset: rounded up, within
 * [0, {@link MAX_HEADER_VALUE}]; `undefined` when the wait is not known.
 */
export function retryAfterSeconds(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : headerNumber(Math.ceil(ms / 1000));
}

/**
 * The IETF `RateLimit-Policy` / `RateLimit` headers for a blocked request, in the given draft's
 * form: remaining `0`, reset in whole seconds (the block's `retryAfterMs` rounded up, else the
 * window), each number within [0, {@link MAX_HEADER_VALUE}]. `undefined` when the block has no
 * quota policy (`error.quota()`: QPS flow and hotspot rules).
 *
 * @example
 * rateLimitHeaders(error, 'draft-8');
 * // { 'RateLimit-Policy': '"flow";q=10;w=1', RateLimit: '"flow";r=0;t=1' }
 */
export function rateLimitHeaders(error: BlockError, draft: RateLimitHeadersDraft): Record<string, string> | undefined {
  const policy = error.quota();
  if (policy === undefined) return undefined;
  return quotaHeaders(policy, 0, retryAfterSeconds(error.retryAfterMs) ?? policy.windowSeconds, draft);
}

/**
 * The IETF `RateLimit-Policy` / `RateLimit` headers of a quota with `remaining` requests left
 * and `resetSeconds` until it renews, in the given draft's form (a passing response's headers,
 * as express-rate-limit sends them). Each number is written as a whole number within
 * [0, {@link MAX_HEADER_VALUE}] (rounded down, larger ones as the bound), whatever it is given.
 *
 * @example
 * quotaHeaders({ name: 'flow', quota: 10, windowSeconds: 1 }, 7, 1, 'draft-8');
 * // { 'RateLimit-Policy': '"flow";q=10;w=1', RateLimit: '"flow";r=7;t=1' }
 */
export function quotaHeaders(
  policy: QuotaPolicy,
  remaining: number,
  resetSeconds: number,
  draft: RateLimitHeadersDraft,
): Record<string, string> {
  const name = policy.name;
  const quota = headerNumber(policy.quota);
  const windowSeconds = headerNumber(policy.windowSeconds);
  const left = headerNumber(remaining);
  const reset = headerNumber(resetSeconds);
  switch (draft) {
    case 'draft-6':
      return {
        'RateLimit-Policy': `${quota};w=${windowSeconds}`,
        'RateLimit-Limit': String(quota),
        'RateLimit-Remaining': String(left),
        'RateLimit-Reset': String(reset),
      };
    case 'draft-7':
      return {
        'RateLimit-Policy': `${quota};w=${windowSeconds}`,
        RateLimit: `limit=${quota}, remaining=${left}, reset=${reset}`,
      };
    case 'draft-8':
      return {
        'RateLimit-Policy': `"${name}";q=${quota};w=${windowSeconds}`,
        RateLimit: `"${name}";r=${left};t=${reset}`,
      };
  }
}
