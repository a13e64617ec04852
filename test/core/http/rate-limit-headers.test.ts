import { FlowBlockError } from '@floodgate/core';
import type { FlowRule } from '@floodgate/core/metrics';
import { MAX_HEADER_VALUE, quotaHeaders, rateLimitHeaders } from '@floodgate/core/http';

const qpsRule: FlowRule = {
  resource: 'GET /a',
  metric: 'qps',
  threshold: 10,
  behavior: 'reject',
  strategy: 'direct',
  limitOrigin: 'default',
};
const quota = { name: 'flow', quota: 10, windowSeconds: 1 };

describe('rateLimitHeaders', () => {
  it('describes a QPS block with nothing remaining, reset at the retry', () => {
    expect(
      rateLimitHeaders(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 1500 }), 'draft-8'),
    ).toEqual({
      'RateLimit-Policy': '"flow";q=10;w=1',
      RateLimit: '"flow";r=0;t=2',
    });
  });

  it('resets at the window when the wait is not known', () => {
    expect(rateLimitHeaders(new FlowBlockError({ resource: 'GET /a', rule: qpsRule }), 'draft-7')).toEqual({
      'RateLimit-Policy': '10;w=1',
      RateLimit: 'limit=10, remaining=0, reset=1',
    });
  });

  it.each([
    [
      'draft-6',
      {
        'RateLimit-Policy': '2147483647;w=1',
        'RateLimit-Limit': '2147483647',
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': '2147483647',
      },
    ],
    ['draft-7', { 'RateLimit-Policy': '2147483647;w=1', RateLimit: 'limit=2147483647, remaining=0, reset=2147483647' }],
    ['draft-8', { 'RateLimit-Policy': '"flow";q=2147483647;w=1', RateLimit: '"flow";r=0;t=2147483647' }],
  ] as const)('writes a far reset and a huge quota as MAX_HEADER_VALUE in %s form (#24)', (draft, headers) => {
    const rule = { ...qpsRule, threshold: Number.MAX_SAFE_INTEGER };
    expect(rateLimitHeaders(new FlowBlockError({ resource: 'GET /a', rule, retryAfterMs: 1e303 }), draft)).toEqual(
      headers,
    );
  });

  it('describes nothing for a block without a quota', () => {
    expect(
      rateLimitHeaders(
        new FlowBlockError({ resource: 'GET /a', rule: { ...qpsRule, metric: 'concurrency' } }),
        'draft-8',
      ),
    ).toBeUndefined();
  });
});

describe('quotaHeaders', () => {
  it.each([
    [
      'draft-6',
      { 'RateLimit-Policy': '10;w=1', 'RateLimit-Limit': '10', 'RateLimit-Remaining': '7', 'RateLimit-Reset': '1' },
    ],
    ['draft-7', { 'RateLimit-Policy': '10;w=1', RateLimit: 'limit=10, remaining=7, reset=1' }],
    ['draft-8', { 'RateLimit-Policy': '"flow";q=10;w=1', RateLimit: '"flow";r=7;t=1' }],
  ] as const)('writes a quota with what is left in %s form', (draft, headers) => {
    expect(quotaHeaders(quota, 7, 1, draft)).toEqual(headers);
  });

  it.each([
    [Number.NaN, Number.POSITIVE_INFINITY, -1, 0.5],
    [1e308, 2 ** 53, Number.NEGATIVE_INFINITY, Number.NaN],
  ])('writes any number it is given as a whole number within [0, MAX_HEADER_VALUE] (#24)', (q, w, r, t) => {
    expect(quotaHeaders({ name: 'flow', quota: q, windowSeconds: w }, r, t, 'draft-8')).toEqual({
      'RateLimit-Policy': `"flow";q=${q > 0 ? MAX_HEADER_VALUE : 0};w=${MAX_HEADER_VALUE}`,
      RateLimit: '"flow";r=0;t=0',
    });
  });

  it('bounds every header number at 2^31 − 1, RFC 9111’s bound for delta-seconds', () => {
    expect(MAX_HEADER_VALUE).toBe(2147483647);
  });
});
