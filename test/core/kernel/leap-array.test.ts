import { LeapArray } from '../../../packages/core/src/kernel/leap-array';

describe('LeapArray', () => {
  it('sums the buckets within the interval', () => {
    const window = new LeapArray(2, 1000, 1);
    window.add(0, 0, 1);
    window.add(600, 0, 2);
    expect(window.sum(999, 0)).toBe(3);
  });

  it('drops a bucket when time comes back to its slot', () => {
    const window = new LeapArray(2, 1000, 1);
    window.add(0, 0, 1);
    window.add(600, 0, 2);
    expect(window.sum(1000, 0)).toBe(2);
    expect(window.sum(1500, 0)).toBe(0);
  });

  it('ignores buckets older than the interval without rotating them', () => {
    const window = new LeapArray(4, 1000, 1);
    window.add(0, 0, 5);
    expect(window.sum(1300, 0)).toBe(0);
  });

  it('resets a rotated bucket to the reset values', () => {
    const window = new LeapArray(1, 1000, 2, [0, Number.POSITIVE_INFINITY]);
    window.data[window.offset(10) + 1] = 3;
    expect(window.min(20, 1)).toBe(3);
    expect(window.min(1010, 1)).toBe(Number.POSITIVE_INFINITY);
  });

  it('reads the previous bucket only when it is the adjacent window', () => {
    const window = new LeapArray(60, 60_000, 1);
    window.add(1500, 0, 7);
    expect(window.previous(2100, 0)).toBe(7);
    expect(window.previous(3100, 0)).toBe(0);
  });

  it('finds the oldest bucket holding a non-zero value', () => {
    const window = new LeapArray(2, 1000, 1);
    window.add(100, 0, 1);
    window.add(700, 0, 1);
    expect(window.oldestStartWith(800, 0)).toBe(0);
    expect(window.oldestStartWith(1200, 0)).toBe(500);
  });

  it('handles fractional times and bucket lengths', () => {
    const window = new LeapArray(3, 1000, 1);
    window.add(333.4, 0, 1);
    window.add(666.7, 0, 1);
    expect(window.sum(999.9, 0)).toBe(2);
  });
});

describe('LeapArray.sumAll', () => {
  it('sums every field over the live buckets in one pass', () => {
    const window = new LeapArray(2, 1000, 3);
    window.add(100, 0, 1);
    window.add(100, 2, 4);
    window.add(600, 1, 2);
    window.add(600, 2, 1);
    const out = new Float64Array(3).fill(99);
    window.sumAll(999, out);
    expect([...out]).toEqual([1, 2, 5]);
    window.sumAll(1600, out);
    expect([...out]).toEqual([0, 0, 0]);
  });
});

describe('LeapArray.max', () => {
  it('takes the largest value of a field over the live buckets, 0 when none is live', () => {
    const window = new LeapArray(3, 3000, 1);
    window.add(0, 0, 4);
    window.add(1000, 0, 9);
    window.add(2000, 0, 2);
    expect(window.max(2500, 0)).toBe(9);
    expect(window.max(4500, 0)).toBe(2);
    expect(window.max(10_000, 0)).toBe(0);
  });
});
