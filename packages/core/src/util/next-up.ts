const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/** The least double greater than `x` (Java's `Math.nextUp`), for finite `x >= 0`. */
export function nextUp(x: number): number {
  if (!(x >= 0) || x === Number.POSITIVE_INFINITY) return x;
  if (x === 0) return Number.MIN_VALUE;
  f64[0] = x;
  u64[0]! += 1n;
  return f64[0]!;
}
