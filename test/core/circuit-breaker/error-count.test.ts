import { ErrorCountBreaker } from '../../../packages/core/src/circuit-breaker/error-count';

describe('ErrorCountBreaker', () => {
  it('does not trip when the error count equals the threshold', () => {
    expect(new ErrorCountBreaker(3).trip({ total: 10, slow: 0, error: 3 })).toBeUndefined();
  });

  it('trips with the error count when it is greater than the threshold', () => {
    expect(new ErrorCountBreaker(3).trip({ total: 10, slow: 0, error: 4 })).toBe(4);
  });

  it('trips on the first error when the threshold is 0', () => {
    expect(new ErrorCountBreaker(0).trip({ total: 1, slow: 0, error: 1 })).toBe(1);
  });

  it('ignores slow calls', () => {
    expect(new ErrorCountBreaker(0).trip({ total: 5, slow: 5, error: 0 })).toBeUndefined();
  });
});
