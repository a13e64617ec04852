import type { BlockError } from '../errors/block-error';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';

/**
 * The form of the IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers):
 * - `'draft-6'`: `RateLimit-Policy: 10;w=1` and `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`;
 * - `'draft-7'`: `RateLimit-Policy: 10;w=1` and `RateLimit: limit=10, remaining=0, reset=1`;
 * - `'draft-8'`: `RateLimit-Policy: "flow";q=10;w=1` and `RateLimit: "flow";r=0;t=1`.
 */
export type RateLimitHeadersDraft = 'draft-6' | 'draft-7' | 'draft-8';

/** The quota a QPS rule enforces, as the RateLimit headers describe it. */
export interface QuotaPolicy {
  /** The policy's name in draft-8 headers and in `violated-policies`: `'flow'` or `'hotspot'`. */
  readonly name: string;
  /** Requests allowed per window (the rule's threshold, rounded down to an integer). */
  readonly quota: number;
  /** The window in whole seconds: 1 for flow rules, `durationMs` rounded up for hotspot rules. */
  readonly windowSeconds: number;
}

/**
 * The quota policy behind a block, for QPS flow and hotspot rules; `undefined` for every other
 * block (concurrency limits, circuit breakers, system and authority rules have no quota). A
 * hotspot block reports the threshold of its value (`specificItems`) when it has one.
 */
export function quotaPolicy(error: BlockError): QuotaPolicy | undefined {
  if (error.code === 'ERR_FLOW_BLOCKED') {
    const rule = error.rule as FlowRule;
    if (rule.metric !== 'qps') return undefined;
    return { name: 'flow', quota: Math.floor(rule.threshold), windowSeconds: 1 };
  }
  if (error.code === 'ERR_HOT_PARAM_BLOCKED') {
    const rule = error.rule as HotParamRule;
    if (rule.metric !== 'qps') return undefined;
    const value = (error as BlockError & { readonly value?: unknown }).value;
    const specific = rule.specificItems?.[String(value)];
    const threshold = specific ?? rule.threshold;
    return { name: 'hotspot', quota: Math.floor(threshold), windowSeconds: Math.max(1, Math.ceil(rule.durationMs / 1000)) };
  }
  return undefined;
}

/**
 * The IETF `RateLimit-Policy` / `RateLimit` headers for a blocked request, in the given draft's
 * form: remaining `0`, reset in whole seconds (the block's `retryAfterMs` rounded up, else the
 * window). `undefined` when the block has no quota policy (see {@link quotaPolicy}).
 *
 * @example
 * rateLimitHeaders(error, 'draft-8');
 * // { 'RateLimit-Policy': '"flow";q=10;w=1', RateLimit: '"flow";r=0;t=1' }
 */
export function rateLimitHeaders(error: BlockError, draft: RateLimitHeadersDraft): Record<string, string> | undefined {
  const policy = quotaPolicy(error);
  if (policy === undefined) return undefined;
  const { name, quota, windowSeconds } = policy;
  const reset = error.retryAfterMs === undefined ? windowSeconds : Math.max(0, Math.ceil(error.retryAfterMs / 1000));
  switch (draft) {
    case 'draft-6':
      return {
        'RateLimit-Policy': `${quota};w=${windowSeconds}`,
        'RateLimit-Limit': String(quota),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(reset),
      };
    case 'draft-7':
      return {
        'RateLimit-Policy': `${quota};w=${windowSeconds}`,
        RateLimit: `limit=${quota}, remaining=0, reset=${reset}`,
      };
    case 'draft-8':
      return {
        'RateLimit-Policy': `"${name}";q=${quota};w=${windowSeconds}`,
        RateLimit: `"${name}";r=0;t=${reset}`,
      };
  }
}
