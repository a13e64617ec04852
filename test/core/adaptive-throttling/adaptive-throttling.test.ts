import { AdaptiveThrottlingError, Entry, Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { ADAPTIVE_THROTTLING_RULE_DEFAULTS } from '../../../packages/core/src/adaptive-throttling/adaptive-throttling-rule';
import fc from 'fast-check';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/**
 * An engine whose random source returns `draw.next` (1 by default: no refusal), counting its
 * draws: a call is only drawn for while its rejection probability is above 0.
 */
function engine(rule: { k?: number; windowMs?: number } = {}) {
  const clock = new ManualClock(1_000_000);
  const draw = { next: 1, count: 0 };
  const fg = new Floodgate({
    clock,
    random: () => {
      draw.count++;
      return draw.next;
    },
  });
  fg.loadRules({ adaptiveThrottling: [{ resource: 'r', ...rule }] });
  return { fg, clock, draw };
}

/** `n` calls the dependency accepts (`ok`) or rejects; returns how many were sent. */
function calls(fg: Floodgate, n: number, ok: boolean): number {
  let sent = 0;
  for (let i = 0; i < n; i++) {
    const entry = fg.tryEntry('r');
    if (!(entry instanceof Entry)) continue;
    sent++;
    if (!ok) entry.traceError(new Error('rejected'));
    entry.exit();
  }
  return sent;
}

describe('adaptive throttling rules', () => {
  it("resolve the SRE book's defaults: K = 2 over two minutes", () => {
    const { fg } = engine();
    expect(fg.getRules().adaptiveThrottling).toEqual([{ resource: 'r', k: 2, windowMs: 120_000 }]);
    expect(ADAPTIVE_THROTTLING_RULE_DEFAULTS).toEqual({ k: 2, windowMs: 120_000 });
  });

  it('name bad fields by path', () => {
    expect(() => new Floodgate().loadRules({ adaptiveThrottling: [{ resource: 'r', k: 0.5, windowMs: 5 }] })).toThrow(
      'adaptiveThrottling[0].k: must be a finite number >= 1, got 0.5; adaptiveThrottling[0].windowMs: must be a finite number within [10, 2147483647], got 5',
    );
  });

  it('refuse nothing, and draw nothing, while the dependency accepts every call', () => {
    const { fg, draw } = engine();
    draw.next = 0;
    expect(calls(fg, 100, true)).toBe(100);
    expect(draw.count).toBe(0);
  });

  it('refuse with probability (requests − K × accepts) / (requests + 1), drawn from the engine', () => {
    const refusedAt = (next: number): boolean => {
      const { fg, draw } = engine();
      calls(fg, 2, true);
      calls(fg, 8, false);
      // 10 requests, 2 accepted: p = (10 − 2 × 2) / 11.
      draw.next = next;
      return fg.tryEntry('r') instanceof AdaptiveThrottlingError;
    };
    expect(refusedAt(6 / 11 - 1e-9)).toBe(true);
    expect(refusedAt(6 / 11)).toBe(false);
  });

  it('apply K: with K = 1, one rejection in two calls already refuses', () => {
    const { fg, draw } = engine({ k: 1 });
    calls(fg, 1, true);
    calls(fg, 1, false);
    // 2 requests, 1 accept: p = 1/3 with K = 1 (0 with K = 2).
    draw.next = 0.3;
    expect(fg.tryEntry('r')).toBeInstanceOf(AdaptiveThrottlingError);
  });

  it('count refused calls as requests, so refusals grow while rejections go on', () => {
    const refusedAt = (next: number, refusedBefore: number): boolean => {
      const { fg, draw } = engine();
      calls(fg, 4, false);
      draw.next = 0;
      for (let i = 0; i < refusedBefore; i++) expect(fg.tryEntry('r')).toBeInstanceOf(AdaptiveThrottlingError);
      draw.next = next;
      return fg.tryEntry('r') instanceof AdaptiveThrottlingError;
    };
    // 4 rejected: p = 4/5; after 4 more refused locally: p = 8/9.
    expect(refusedAt(0.85, 0)).toBe(false);
    expect(refusedAt(0.85, 4)).toBe(true);
  });

  it('count a call with a pushback as not accepted', () => {
    const { fg, draw } = engine();
    for (let i = 0; i < 2; i++) {
      const entry = fg.entry('r');
      entry.tracePushback(0);
      entry.exit();
    }
    // 2 requests, 0 accepts: p = 2/3.
    draw.next = 0.6;
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_ADAPTIVE_THROTTLED', kind: 'adaptiveThrottling' });
  });

  it('forget requests and accepts after windowMs', async () => {
    const { fg, clock, draw } = engine({ windowMs: 1000 });
    calls(fg, 4, false);
    await clock.advance(1100);
    draw.next = 0;
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });

  it('take back the request of a call a later check refuses', () => {
    const { fg, draw } = engine();
    fg.loadRules({
      circuitBreakers: [
        { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
      ],
    });
    const failed = fg.entry('r');
    failed.traceError(new Error('down'));
    failed.exit();
    // The breaker (checked after adaptive throttling) refuses these: they are not requests.
    for (let i = 0; i < 5; i++) expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN' });
    fg.loadRules({ circuitBreakers: [] });
    // One request, no accept: p = 1/2, not 6/7.
    draw.next = 0.6;
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });

  it(
    'refuses exactly when the draw is under the probability its trailing window gives, and never while accepts keep up',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(1, 1.5, 2, 3),
          fc.array(
            fc.oneof(
              fc.record({
                op: fc.constant('call' as const),
                accepted: fc.boolean(),
                draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
              }),
              fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 600 }) }),
            ),
            { maxLength: 120 },
          ),
          async (k, steps) => {
            const windowMs = 1000;
            const bucketMs = windowMs / 10;
            const { fg, clock, draw } = engine({ k, windowMs });
            // The model: every request and accept with its bucket.
            const requests: number[] = [];
            const accepts: number[] = [];
            for (const step of steps) {
              if (step.op === 'advance') {
                await clock.advance(step.ms);
                continue;
              }
              const bucket = Math.floor(clock.now() / bucketMs);
              const inWindow = (b: number): boolean => b > bucket - 10;
              const req = requests.filter(inWindow).length;
              const acc = accepts.filter(inWindow).length;
              const p = Math.max(0, (req - k * acc) / (req + 1));
              draw.next = step.draw;
              const entry = fg.tryEntry('r');
              requests.push(bucket);
              expect(entry instanceof Entry).toBe(!(p > 0 && step.draw < p));
              if (acc * k >= req) expect(entry).toBeInstanceOf(Entry);
              if (!(entry instanceof Entry)) continue;
              if (step.accepted) accepts.push(bucket);
              else entry.traceError(new Error('rejected'));
              entry.exit();
            }
          },
        ),
        propertyRuns(200),
      );
    },
    propertyTimeoutMs(200),
  );
});
