import { ErrorRatioBreaker } from '../../../packages/core/src/circuit-breaker/error-ratio';

describe('ErrorRatioBreaker', () => {
  it('does not trip when the error ratio equals the threshold', () => {
    expect(new ErrorRatioBreaker(0.5).trip({ total: 10, slow: 0, error: 5 })).toBeUndefined();
  });

  it('trips with the error ratio when it is greater than the threshold', () => {
    expect(new ErrorRatioBreaker(0.5).trip({ total: 10, slow: 0, error: 6 })).toBe(0.6);
  });

  it('trips at a ratio of exactly 1.0 when the threshold is 1.0', () => {
    expect(new ErrorRatioBreaker(1).trip({ total: 3, slow: 0, error: 3 })).toBe(1);
  });

  it('does not trip below 1.0 when the threshold is 1.0', () => {
    expect(new ErrorRatioBreaker(1).trip({ total: 3, slow: 0, error: 2 })).toBeUndefined();
  });

  it('ignores slow calls', () => {
    expect(new ErrorRatioBreaker(0.5).trip({ total: 4, slow: 4, error: 0 })).toBeUndefined();
  });

  it('does not trip on an empty window', () => {
    expect(new ErrorRatioBreaker(0).trip({ total: 0, slow: 0, error: 0 })).toBeUndefined();
  });
});
