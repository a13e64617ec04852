import {
  ErrorCountBreaker,
  ErrorRatioBreaker,
  SlowRequestRatioBreaker,
} from '../../../packages/core/src/circuit-breaker/strategies';

describe('SlowRequestRatioBreaker', () => {
  it('does not trip when the slow ratio equals the threshold', () => {
    expect(new SlowRequestRatioBreaker(0.5).trip({ total: 10, slow: 5, error: 0 })).toBeUndefined();
  });

  it('trips with the slow ratio when it is greater than the threshold', () => {
    expect(new SlowRequestRatioBreaker(0.5).trip({ total: 10, slow: 6, error: 0 })).toBe(0.6);
  });

  it('trips at a ratio of exactly 1.0 when the threshold is 1.0', () => {
    expect(new SlowRequestRatioBreaker(1).trip({ total: 4, slow: 4, error: 0 })).toBe(1);
  });

  it('does not trip below 1.0 when the threshold is 1.0', () => {
    expect(new SlowRequestRatioBreaker(1).trip({ total: 4, slow: 3, error: 0 })).toBeUndefined();
  });

  it('trips on any slow call when the threshold is 0', () => {
    expect(new SlowRequestRatioBreaker(0).trip({ total: 4, slow: 1, error: 0 })).toBe(0.25);
  });

  it('ignores errors', () => {
    expect(new SlowRequestRatioBreaker(0.5).trip({ total: 4, slow: 0, error: 4 })).toBeUndefined();
  });

  it('does not trip on an empty window', () => {
    expect(new SlowRequestRatioBreaker(0).trip({ total: 0, slow: 0, error: 0 })).toBeUndefined();
  });
});

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
