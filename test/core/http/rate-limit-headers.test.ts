import { FlowBlockError, type FlowRule } from '@floodgate/core';
import { quotaHeaders, rateLimitHeaders } from '@floodgate/core/http';

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
});
