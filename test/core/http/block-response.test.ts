import {
  AuthorityBlockError,
  CircuitOpenError,
  FlowBlockError,
  HotParamBlockError,
  SystemBlockError,
  TimeoutError,
} from '@floodgate/core';
import type { CircuitBreakerRule, FlowRule, HotParamRule } from '@floodgate/core/metrics';
import { blockResponse, MAX_HEADER_VALUE, timeoutResponse } from '@floodgate/core/http';

const qpsRule: FlowRule = {
  resource: 'GET /a',
  metric: 'qps',
  threshold: 10,
  behavior: 'reject',
  strategy: 'direct',
  limitOrigin: 'default',
};
const concurrencyRule: FlowRule = { ...qpsRule, metric: 'concurrency', threshold: 2 };
const hotRule: HotParamRule = {
  resource: 'GET /users/:id',
  paramKey: 'id',
  metric: 'qps',
  threshold: 5,
  behavior: 'reject',
  durationMs: 2500,
  burstCount: 0,
  maxQueueingTimeMs: 0,
  capacity: 100,
  specificItems: { vip: 50 },
};
const breakerRule: CircuitBreakerRule = {
  resource: 'GET /feed',
  strategy: 'errorRatio',
  threshold: 0.5,
  minRequestAmount: 5,
  statIntervalMs: 1000,
  bucketCount: 1,
  retryTimeoutMs: 5000,
  halfOpenProbes: 1,
};

describe('blockResponse', () => {
  it('answers a QPS flow block with 429, quota-exceeded and draft-8 RateLimit headers', () => {
    const { json, ...response } = blockResponse(
      new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 300 }),
    );
    expect(JSON.parse(json)).toEqual(response.body);
    expect(response).toEqual({
      status: 429,
      headers: {
        'Content-Type': 'application/problem+json; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(json)),
        'Retry-After': '1',
        'RateLimit-Policy': '"flow";q=10;w=1',
        RateLimit: '"flow";r=0;t=1',
      },
      body: {
        type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
        title: 'Request cannot be satisfied as assigned quota has been exceeded',
        status: 429,
        detail: 'The request rate limit of this resource was exceeded.',
        code: 'ERR_FLOW_BLOCKED',
        resource: 'GET /a',
        'violated-policies': ['flow'],
      },
    });
  });

  it('rounds Retry-After up to whole seconds', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 1001 }));
    expect(response.headers['Retry-After']).toBe('2');
  });

  it('writes a wait too long for Retry-After as MAX_HEADER_VALUE seconds, never 1e+300 (#24)', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 1e303 }));
    expect(response.headers).toMatchObject({
      'Retry-After': String(MAX_HEADER_VALUE),
      RateLimit: `"flow";r=0;t=${MAX_HEADER_VALUE}`,
    });
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'sends no Retry-After for a wait of %s, and no NaN in the RateLimit headers (#24)',
    (retryAfterMs) => {
      const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs }));
      expect(response.headers['Retry-After']).toBeUndefined();
      expect(response.headers.RateLimit).toBe('"flow";r=0;t=1');
    },
  );

  it('writes a hotspot window of years as MAX_HEADER_VALUE seconds, and a quota of 2^53 − 1 as the same bound (#24)', () => {
    const rule = {
      ...hotRule,
      threshold: Number.MAX_SAFE_INTEGER,
      durationMs: Number.MAX_SAFE_INTEGER,
      specificItems: {},
    };
    const response = blockResponse(
      new HotParamBlockError({ resource: 'GET /users/:id', rule, retryAfterMs: Number.MAX_SAFE_INTEGER, value: 'u' }),
    );
    expect(response.headers).toMatchObject({
      'Retry-After': String(MAX_HEADER_VALUE),
      'RateLimit-Policy': `"hotspot";q=${MAX_HEADER_VALUE};w=${MAX_HEADER_VALUE}`,
      RateLimit: `"hotspot";r=0;t=${MAX_HEADER_VALUE}`,
    });
  });

  it('sends no Retry-After when the wait is not known', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: concurrencyRule }));
    expect(response.headers['Retry-After']).toBeUndefined();
  });

  it('answers a concurrency block with 429 and no RateLimit headers', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: concurrencyRule }));
    expect(response.status).toBe(429);
    expect(response.headers).toEqual({
      'Content-Type': 'application/problem+json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(response.json)),
    });
    expect(response.body.detail).toBe('The limit of concurrent requests to this resource was reached.');
    expect(response.body['violated-policies']).toBeUndefined();
  });

  it('answers a hotspot block with 429 and the window of its duration, for the value’s own threshold', () => {
    const response = blockResponse(
      new HotParamBlockError({ resource: 'GET /users/:id', rule: hotRule, retryAfterMs: 2000, value: 'vip' }),
    );
    expect(response.status).toBe(429);
    expect(response.headers['RateLimit-Policy']).toBe('"hotspot";q=50;w=3');
    expect(response.headers.RateLimit).toBe('"hotspot";r=0;t=2');
    expect(response.body).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      resource: 'GET /users/:id',
      'violated-policies': ['hotspot'],
    });
  });

  it('never puts the limited value in the body', () => {
    const response = blockResponse(
      new HotParamBlockError({ resource: 'GET /users/:id', rule: hotRule, value: 'secret-user' }),
    );
    expect(JSON.stringify(response.body)).not.toContain('secret-user');
  });

  it('answers an open circuit with 503, temporary-reduced-capacity and Retry-After', () => {
    const { json, ...response } = blockResponse(
      new CircuitOpenError({ resource: 'GET /feed', rule: breakerRule, retryAfterMs: 4200 }),
    );
    expect(JSON.parse(json)).toEqual(response.body);
    expect(response).toEqual({
      status: 503,
      headers: {
        'Content-Type': 'application/problem+json; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(json)),
        'Retry-After': '5',
      },
      body: {
        type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
        title: 'Request cannot be satisfied due to temporary server capacity constraints',
        status: 503,
        detail: 'The resource is temporarily unavailable: its circuit breaker is open.',
        code: 'ERR_CIRCUIT_OPEN',
        resource: 'GET /feed',
      },
    });
  });

  it('builds the body of a kind of block on a resource once, and keeps headers per block', () => {
    const first = blockResponse(new FlowBlockError({ resource: 'GET /once', rule: qpsRule, retryAfterMs: 300 }));
    const second = blockResponse(new FlowBlockError({ resource: 'GET /once', rule: qpsRule, retryAfterMs: 2500 }));
    const other = blockResponse(new FlowBlockError({ resource: 'GET /other', rule: qpsRule, retryAfterMs: 300 }));
    expect(second.body).toBe(first.body);
    expect(second.json).toBe(first.json);
    expect(Object.isFrozen(first.body)).toBe(true);
    expect(other.body.resource).toBe('GET /other');
    expect([first.headers['Retry-After'], second.headers['Retry-After']]).toEqual(['1', '3']);
  });

  it('shares the frozen headers of blocks alike, and builds them anew when the wait, the quota or the draft differ', () => {
    const block = (retryAfterMs: number, threshold = 10) =>
      new FlowBlockError({ resource: 'GET /alike', rule: { ...qpsRule, threshold }, retryAfterMs });
    const first = blockResponse(block(900));
    expect(Object.isFrozen(first.headers)).toBe(true);
    expect(blockResponse(block(400)).headers).toBe(first.headers);
    const later = blockResponse(block(1900));
    expect(later.headers).toEqual({ ...first.headers, 'Retry-After': '2', RateLimit: '"flow";r=0;t=2' });
    const higher = blockResponse(block(1900, 20));
    expect(higher.headers['RateLimit-Policy']).toBe('"flow";q=20;w=1');
    const draft7 = blockResponse(block(1900, 20), { headers: 'draft-7' });
    expect(draft7.headers).toMatchObject({ 'RateLimit-Policy': '20;w=1', RateLimit: 'limit=20, remaining=0, reset=2' });
    const none = blockResponse(block(1900, 20), { headers: false });
    expect(none.headers).toEqual({
      'Content-Type': first.headers['Content-Type'],
      'Content-Length': String(none.json.length),
      'Retry-After': '2',
    });
  });

  it('keeps one body per detail, code and policy on a resource, never mixing them up', () => {
    const resource = 'GET /mixed';
    const qps = blockResponse(new FlowBlockError({ resource, rule: qpsRule }));
    const concurrent = blockResponse(new FlowBlockError({ resource, rule: concurrencyRule }));
    const open = blockResponse(new CircuitOpenError({ resource, rule: breakerRule, retryAfterMs: 1000 }));
    const draft7 = blockResponse(new FlowBlockError({ resource, rule: qpsRule }), { headers: 'draft-7' });
    expect(new Set([qps.json, concurrent.json, open.json, draft7.json]).size).toBe(4);
    expect(blockResponse(new FlowBlockError({ resource, rule: concurrencyRule })).body).toBe(concurrent.body);
    expect(blockResponse(new FlowBlockError({ resource, rule: qpsRule }), { headers: 'draft-7' }).body).toBe(
      draft7.body,
    );
    expect(blockResponse(new FlowBlockError({ resource, rule: qpsRule })).body).toBe(qps.body);
    expect([qps.body.code, concurrent.body.code, open.body.code]).toEqual([
      'ERR_FLOW_BLOCKED',
      'ERR_FLOW_BLOCKED',
      'ERR_CIRCUIT_OPEN',
    ]);
    expect(qps.body['violated-policies']).toBeDefined();
    expect(draft7.body['violated-policies']).toBeUndefined();
  });

  it('answers system protection with 503', () => {
    const response = blockResponse(
      new SystemBlockError({
        resource: 'GET /a',
        rule: { maxCpuUsage: 0.8, retryAfterMs: 1000 },
        limit: 'maxCpuUsage',
        value: 0.9,
      }),
    );
    expect(response.status).toBe(503);
    expect(response.body.code).toBe('ERR_SYSTEM_BLOCKED');
  });

  it('answers an authority block with 403 and an about:blank problem', () => {
    const response = blockResponse(
      new AuthorityBlockError({
        resource: 'GET /a',
        rule: { resource: 'GET /a', strategy: 'deny', origins: ['x'] },
        origin: 'x',
      }),
    );
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      code: 'ERR_AUTHORITY_BLOCKED',
    });
  });

  it('writes draft-7 RateLimit headers when asked', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 300 }), {
      headers: 'draft-7',
    });
    expect(response.headers['RateLimit-Policy']).toBe('10;w=1');
    expect(response.headers.RateLimit).toBe('limit=10, remaining=0, reset=1');
    expect(response.body['violated-policies']).toBeUndefined();
  });

  it('writes draft-6 RateLimit headers when asked', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 300 }), {
      headers: 'draft-6',
    });
    expect(response.headers).toMatchObject({
      'RateLimit-Policy': '10;w=1',
      'RateLimit-Limit': '10',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '1',
    });
    expect(response.headers.RateLimit).toBeUndefined();
  });

  it('writes no RateLimit headers when they are turned off, but keeps Retry-After', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /a', rule: qpsRule, retryAfterMs: 300 }), {
      headers: false,
    });
    expect(response.headers).toEqual({
      'Content-Type': 'application/problem+json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(response.json)),
      'Retry-After': '1',
    });
  });

  it('answers a timeout with 503, temporary-reduced-capacity and code ERR_TIMEOUT, without Retry-After', () => {
    const { json, ...response } = timeoutResponse(new TimeoutError('GET /report', 2000));
    expect(JSON.parse(json)).toEqual(response.body);
    expect(response).toEqual({
      status: 503,
      headers: {
        'Content-Type': 'application/problem+json; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(json)),
      },
      body: {
        type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
        title: 'Request cannot be satisfied due to temporary server capacity constraints',
        status: 503,
        detail: 'The request did not complete within the time allowed to this resource.',
        code: 'ERR_TIMEOUT',
        resource: 'GET /report',
      },
    });
  });

  it('counts the Content-Length in bytes, not characters', () => {
    const response = blockResponse(new FlowBlockError({ resource: 'GET /café', rule: qpsRule }));
    expect(response.headers['Content-Length']).toBe(String(Buffer.from(response.json).length));
    expect(Number(response.headers['Content-Length'])).toBeGreaterThan(response.json.length);
  });
});
