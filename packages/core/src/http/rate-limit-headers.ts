import type { BlockError, QuotaPolicy } from '../kernel/errors';

/**
 * The form of the IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers):
 * - `'draft-6'`: `RateLimit-Policy: 10;w=1` and `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`;
 * - `'draft-7'`: `RateLimit-Policy: 10;w=1` and `RateLimit: limit=10, remaining=0, reset=1`;
 * - `'draft-8'`: `RateLimit-Policy: "flow";q=10;w=1` and `RateLimit: "flow";r=0;t=1`.
 */
export type RateLimitHeadersDraft = 'draft-6' | 'draft-7' | 'draft-8';

/**
 * The IETF `RateLimit-Policy` / `RateLimit` headers for a blocked request, in the given draft's
 * form: remaining `0`, reset in whole seconds (the block's `retryAfterMs` rounded up, else the
 * window). `undefined` when the block has no quota policy (`error.quota()`: QPS flow and hotspot rules).
 *
 * @example
 * rateLimitHeaders(error, 'draft-8');
 * // { 'RateLimit-Policy': '"flow";q=10;w=1', RateLimit: '"flow";r=0;t=1' }
 */
export function rateLimitHeaders(error: BlockError, draft: RateLimitHeadersDraft): Record<string, string> | undefined {
  const policy = error.quota();
  if (policy === undefined) return undefined;
  const reset =
    error.retryAfterMs === undefined ? policy.windowSeconds : Math.max(0, Math.ceil(error.retryAfterMs / 1000));
  return quotaHeaders(policy, 0, reset, draft);
}

/**
 * The IETF `RateLimit-Policy` / `RateLimit` headers of a quota with `remaining` requests left
 * and `resetSeconds` until it renews, in the given draft's form (a passing response's headers,
 * as express-rate-limit sends them).
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
  const { name, quota, windowSeconds } = policy;
  switch (draft) {
    case 'draft-6':
      return {
        'RateLimit-Policy': `${quota};w=${windowSeconds}`,
        'RateLimit-Limit': String(quota),
        'RateLimit-Remaining': String(remaining),
        'RateLimit-Reset': String(resetSeconds),
      };
    case 'draft-7':
      return {
        'RateLimit-Policy': `${quota};w=${windowSeconds}`,
        RateLimit: `limit=${quota}, remaining=${remaining}, reset=${resetSeconds}`,
      };
    case 'draft-8':
      return {
        'RateLimit-Policy': `"${name}";q=${quota};w=${windowSeconds}`,
        RateLimit: `"${name}";r=${remaining};t=${resetSeconds}`,
      };
  }
}
