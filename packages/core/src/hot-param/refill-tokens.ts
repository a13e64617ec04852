/** Below this, `remainder × tokenCount / durationMs` floors exactly in doubles (see below). */
const SAFE_PRODUCT = 2 ** 50;

/**
 * The tokens a value's bucket holds after `elapsedMs` without a refill (Sentinel's hotspot
 * refill): `min(rest + ⌊elapsedMs × tokenCount / durationMs⌋, maxTokens)`.
 *
 * Exact for integer times, whatever the gap and threshold: the product
 * `elapsedMs × tokenCount` (which overflows Sentinel's `long` and rounds as a double) is never
 * formed. Each whole duration adds `tokenCount`; the remainder, under one duration, is
 * multiplied only while the bucket is not yet full, in doubles while the product is below
 * 2^50 (where the floor of the quotient is exact) and in BigInt above.
 *
 * @param rest - tokens left, in [0, maxTokens]
 * @param elapsedMs - time since the last refill, > 0 and below 2^53
 * @param tokenCount - tokens per duration: a safe integer > 0
 * @param maxTokens - the bucket's size: a safe integer >= tokenCount
 * @param durationMs - the refill period, > 0
 */
export function refillTokens(
  rest: number,
  elapsedMs: number,
  tokenCount: number,
  maxTokens: number,
  durationMs: number,
): number {
  let periods = Math.floor(elapsedMs / durationMs);
  let remainder = elapsedMs - periods * durationMs;
  if (remainder < 0) {
    // The division rounded up to the next whole duration.
    periods--;
    remainder += durationMs;
  }
  let added = periods * tokenCount;
  if (added < maxTokens) added += partialTokens(remainder, tokenCount, durationMs);
  const total = rest + added;
  return total < maxTokens ? total : maxTokens;
}

/** ⌊remainder × tokenCount / durationMs⌋ for a remainder in [0, durationMs). */
function partialTokens(remainder: number, tokenCount: number, durationMs: number): number {
  const product = remainder * tokenCount;
  // Below 2^50 the quotient's rounding error is under 1/(8 × durationMs), less than its
  // distance to the next integer (at least 1/durationMs), so the floor is exact.
  if (product < SAFE_PRODUCT || !Number.isInteger(remainder) || !Number.isInteger(durationMs)) {
    return Math.floor(product / durationMs);
  }
  return Number((BigInt(remainder) * BigInt(tokenCount)) / BigInt(durationMs));
}
