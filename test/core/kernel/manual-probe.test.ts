import { ManualProbe } from '@floodgate/core/testing';

describe('ManualProbe', () => {
  it('starts idle: every signal 0', () => {
    expect(new ManualProbe().read()).toEqual({
      eventLoopDelayMs: 0,
      eventLoopUtilization: 0,
      cpuUsage: 0,
      heapUsedBytes: 0,
      rssBytes: 0,
    });
  });

  it('changes only the signals it is given', () => {
    const probe = new ManualProbe({ cpuUsage: 0.5, rssBytes: 100 });
    probe.set({ cpuUsage: 0.9 });
    expect(probe.read()).toMatchObject({ cpuUsage: 0.9, rssBytes: 100 });
  });

  it('refuses a signal that is not a finite number >= 0, keeping the ones in place', () => {
    const probe = new ManualProbe({ cpuUsage: 0.5 });
    expect(() => probe.set({ cpuUsage: -1 })).toThrow('ManualProbe: cpuUsage must be a finite number >= 0, got -1');
    expect(() => probe.set({ eventLoopDelayMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(probe.read().cpuUsage).toBe(0.5);
  });

  it('refuses an unknown signal', () => {
    expect(() => new ManualProbe({ load: 3 } as never)).toThrow('ManualProbe: unknown signal "load"');
  });

  it('is sampling while any start stands, and a stop twice is harmless', () => {
    const probe = new ManualProbe();
    const stopA = probe.start();
    const stopB = probe.start();
    stopA();
    stopA();
    expect(probe.sampling).toBe(true);
    stopB();
    expect(probe.sampling).toBe(false);
  });
});
