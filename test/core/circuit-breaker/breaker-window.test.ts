import { BreakerWindow } from '../../../packages/core/src/circuit-breaker/breaker-window';

describe('BreakerWindow', () => {
  it('counts completed, slow and failed calls', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_000, false, false);
    window.record(10_100, true, false);
    window.record(10_200, true, true);
    expect({ ...window.counts(10_300) }).toEqual({ total: 3, slow: 2, error: 1 });
  });

  it('with one bucket, forgets the previous interval as soon as the next one starts', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_999, false, true);
    expect({ ...window.counts(11_000) }).toEqual({ total: 0, slow: 0, error: 0 });
  });

  it('with several buckets, slides one bucket at a time', () => {
    const window = new BreakerWindow(2, 1000);
    window.record(10_400, false, true);
    window.record(10_600, false, true);
    expect(window.counts(10_999).error).toBe(2);
    expect(window.counts(11_000).error).toBe(1);
    expect(window.counts(11_500).error).toBe(0);
  });

  it('is empty after a reset', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_000, true, true);
    window.reset();
    expect({ ...window.counts(10_001) }).toEqual({ total: 0, slow: 0, error: 0 });
  });
});
