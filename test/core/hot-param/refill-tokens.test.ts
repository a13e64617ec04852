import { refillTokens } from '../../../packages/core/src/hot-param/refill-tokens';

/** ⌊elapsed × tokenCount / duration⌋ + rest, capped, in exact integer arithmetic. */
function reference(rest: number, elapsed: number, tokenCount: number, maxTokens: number, duration: number): number {
  const total = BigInt(rest) + (BigInt(elapsed) * BigInt(tokenCount)) / BigInt(duration);
  return total < BigInt(maxTokens) ? Number(total) : maxTokens;
}

/** A small deterministic generator (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('refillTokens', () => {
  it('adds ⌊elapsed × tokenCount / durationMs⌋ and caps at the bucket size', () => {
    expect(refillTokens(0, 61_000, 5, 5, 60_000)).toBe(5);
    expect(refillTokens(0, 1_500, 10, 20, 1_000)).toBe(15);
    expect(refillTokens(3, 1_500, 10, 20, 1_000)).toBe(18);
    expect(refillTokens(8, 1_500, 10, 20, 1_000)).toBe(20);
    expect(refillTokens(0, 1_001, 3, 3, 1_000)).toBe(3);
  });

  it('matches exact integer arithmetic for any gap, threshold and duration', () => {
    const next = random(4);
    const pick = (max: number): number => Math.floor(next() * max);
    for (let i = 0; i < 20_000; i++) {
      const duration = 1 + pick([1_000, 60_000, 86_400_000][i % 3]!);
      const tokenCount = 1 + pick([100, 1e9, 2 ** 52][i % 3]!);
      const maxTokens = Math.min(tokenCount + pick(2 ** 53), Number.MAX_SAFE_INTEGER);
      const elapsed = duration + 1 + pick([duration * 3, 1e12][i % 2]!);
      const rest = pick(maxTokens);
      expect(refillTokens(rest, elapsed, tokenCount, maxTokens, duration)).toBe(
        reference(rest, elapsed, tokenCount, maxTokens, duration),
      );
    }
  });

  it('gives exactly a full bucket after a gap whose product overflows a 64-bit long', () => {
    const tokenCount = 2 ** 53 - 1;
    const elapsed = 2 ** 52;
    expect(BigInt(elapsed) * BigInt(tokenCount)).toBeGreaterThan(2n ** 63n);
    expect(refillTokens(0, elapsed, tokenCount, tokenCount, 1_000)).toBe(tokenCount);
  });

  it('adds exactly the whole durations elapsed under a fractional durationMs', () => {
    // 11242.95 is 17 × 661.35, to the last bit.
    expect(refillTokens(0, 11_242.95, 7, 207, 661.35)).toBe(17 * 7);
  });

  it('adds in proportion to a fractional elapsed time', () => {
    expect(refillTokens(0, 1_500.5, 10, 20, 1_000)).toBe(15);
    expect(refillTokens(2, 1_999.9, 10, 30, 1_000)).toBe(21);
  });

  it('adds exactly in proportion to a fractional elapsed time under a threshold whose product passes 2^50', () => {
    const tokenCount = 2 ** 52 + 1;
    expect(refillTokens(0, 1_001.5, tokenCount, Number.MAX_SAFE_INTEGER, 1_000)).toBe(
      Number((10_015n * BigInt(tokenCount)) / 10_000n),
    );
  });
});
