import { Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { floodgateInterceptor, OUTBOUND_DEFAULTS, type FloodgateInterceptorOptions } from '@floodgate/undici';

function issues(options: FloodgateInterceptorOptions): string[] {
  try {
    floodgateInterceptor({ floodgate: new Floodgate({ clock: new ManualClock() }), ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return (error as RuleValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  return [];
}

describe('outbound options', () => {
  it('documents its defaults: two retries, 50 ms full-jitter backoff up to 2 s, the idempotent methods', () => {
    expect(OUTBOUND_DEFAULTS).toMatchObject({
      maxRetries: 2,
      baseDelayMs: 50,
      maxDelayMs: 2000,
      maxRetryAfterMs: 10_000,
      methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'],
      statusCodes: [429, 500, 502, 503, 504],
      idempotencyKeyHeader: 'idempotency-key',
      measure: 'headers',
      maxHosts: 1000,
    });
  });

  it('declares a retry budget and pushback per host by default, nothing else', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    floodgateInterceptor({ floodgate: fg, hosts: { 'api.example.com': {} } });
    const rules = fg.getRules();
    expect(rules.retryBudgets).toEqual([
      { resource: 'api.example.com', retryRatio: 0.2, ttlMs: 10_000, minRetriesPerSecond: 10 },
    ]);
    expect(rules.pushback).toEqual([{ resource: 'api.example.com', maxPauseMs: 60_000 }]);
    expect(rules.circuitBreakers).toEqual([]);
    expect(rules.flow).toEqual([]);
    expect(rules.adaptiveThrottling).toEqual([]);
  });

  it('lets a host turn off what the defaults turn on, and a route override its host', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    floodgateInterceptor({
      floodgate: fg,
      maxConcurrency: 10,
      hosts: {
        'a.example': { retry: false, pushback: false, maxConcurrency: false },
        'b.example': { routes: { 'GET /slow': { maxConcurrency: 2 } } },
      },
    });
    const resources = (kind: 'flow' | 'retryBudgets' | 'pushback'): string[] => {
      const rules: readonly { resource: string }[] = fg.getRules()[kind];
      return rules.map((rule) => rule.resource).sort();
    };
    expect(resources('flow')).toEqual(['GET b.example/slow', 'b.example']);
    expect(fg.getRules().flow.find((rule) => rule.resource === 'GET b.example/slow')!.threshold).toBe(2);
    expect(resources('retryBudgets')).toEqual(['GET b.example/slow', 'b.example']);
    expect(resources('pushback')).toEqual(['GET b.example/slow', 'b.example']);
  });

  it('names every bad field by path, with its range and the value given', () => {
    expect(
      issues({
        timeoutMs: -1,
        maxConcurrency: 1.5,
        measure: 'socket' as never,
        retry: { maxRetries: 1000, statusCodes: [700], methods: [''], baseDelayMs: Number.NaN, extra: 1 } as never,
        hedge: { percentile: 1 } as never,
        hosts: { 'api.example.com': { timeoutMs: 0 } },
        wrong: true,
      } as never),
    ).toEqual([
      'wrong: unknown field (allowed: circuitBreaker, maxConcurrency, queue, retry, pushback, adaptiveThrottling, hedge, timeoutMs, isFailure, measure, floodgate, hosts, maxHosts)',
      "measure: must be 'headers' or 'body', got \"socket\"",
      'maxConcurrency: must be a safe integer >= 0, got 1.5',
      'retry.extra: unknown field (allowed: maxRetries, baseDelayMs, maxDelayMs, maxRetryAfterMs, methods, statusCodes, idempotencyKeyHeader, budget)',
      'retry.methods[0]: must be a method, got ""',
      'retry.statusCodes[0]: must be a status within [100, 599], got 700',
      'retry.maxRetries: must be a safe integer >= 0 and <= 100, got 1000',
      'retry.baseDelayMs: must be a finite number >= 0 and <= 2147483647, got NaN',
      'hedge.delayMs: is required (a number)',
      'hedge.percentile: must be a finite number > 0 and < 1, got 1',
      'timeoutMs: must be a finite number > 0 and <= 2147483647, got -1',
      'hosts["api.example.com"].timeoutMs: must be a finite number > 0 and <= 2147483647, got 0',
    ]);
  });

  it("validates rule fields with core's own checks, under the option's path", () => {
    expect(
      issues({
        circuitBreaker: { strategy: 'errorRatio', threshold: 2, retryTimeoutMs: 1000 },
        retry: { budget: { retryRatio: -1 } },
        adaptiveThrottling: { k: 0 },
      }),
    ).toEqual([
      'circuitBreaker.threshold: must be a finite number within [0, 1], got 2',
      'retry.budget.retryRatio: must be a finite number within [0, 1000], got -1',
      'adaptiveThrottling.k: must be a finite number >= 1, got 0',
    ]);
  });

  it("validates a bulkhead's queue under its own path, and refuses a queue without maxConcurrency", () => {
    expect(issues({ maxConcurrency: 2, queue: { maxLength: -1, maxQueueingTimeMs: -5 } })).toEqual([
      'queue.maxQueueingTimeMs: must be a finite number within [0, 2147483647], got -5',
      'queue.maxLength: must be a safe integer >= 0, got -1',
    ]);
    expect(issues({ queue: { maxLength: 1 } })).toEqual([
      'queue: needs maxConcurrency (the limit its calls wait under)',
    ]);
    expect(issues({ maxConcurrency: 2, queue: {} as never })).toEqual([
      'queue.maxLength: is required (a safe integer >= 0)',
    ]);
  });
});
