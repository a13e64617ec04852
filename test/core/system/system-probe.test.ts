import { ProcessProbe, processProbe } from '../../../packages/core/src/system/system-probe';

/** Keeps the CPU busy for about `ms` ms of wall time (no timer involved). */
function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('ProcessProbe', () => {
  let probe: ProcessProbe;
  const stops: (() => void)[] = [];

  beforeEach(() => {
    probe = new ProcessProbe();
  });

  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('is idle until started: every signal 0, nothing sampled', () => {
    probe.sample();
    expect(probe.sampling).toBe(false);
    expect(probe.read()).toEqual({
      eventLoopDelayMs: 0,
      eventLoopUtilization: 0,
      cpuUsage: 0,
      heapUsedBytes: 0,
      rssBytes: 0,
    });
  });

  it('reads the memory of the process as soon as it starts', () => {
    stops.push(probe.start());
    const { heapUsedBytes, rssBytes } = probe.read();
    expect(heapUsedBytes).toBeGreaterThan(0);
    expect(rssBytes).toBeGreaterThan(heapUsedBytes);
  });

  it('samples load signals as finite numbers within their ranges', () => {
    stops.push(probe.start());
    burn(30);
    probe.sample();
    const signals = probe.read();
    expect(signals.cpuUsage).toBeGreaterThan(0);
    expect(signals.cpuUsage).toBeLessThanOrEqual(1);
    expect(signals.eventLoopUtilization).toBeGreaterThanOrEqual(0);
    expect(signals.eventLoopUtilization).toBeLessThanOrEqual(1);
    expect(Number.isFinite(signals.eventLoopDelayMs) && signals.eventLoopDelayMs >= 0).toBe(true);
    expect(Object.isFrozen(signals)).toBe(true);
  });

  it('samples while any start stands and stops with the last, back to idle', () => {
    const stopA = probe.start();
    const stopB = probe.start();
    stopA();
    stopA();
    expect(probe.sampling).toBe(true);
    stopB();
    expect(probe.sampling).toBe(false);
    expect(probe.read().heapUsedBytes).toBe(0);
  });

  it('refuses a sample interval or resolution out of range', () => {
    expect(() => new ProcessProbe({ sampleIntervalMs: 5 })).toThrow(
      'sampleIntervalMs must be an integer within [10, 60000], got 5',
    );
    expect(() => new ProcessProbe({ sampleIntervalMs: 100, resolutionMs: 100 })).toThrow(RangeError);
  });

  it('is the shared default, idle while no engine asks for it', () => {
    expect(processProbe).toBeInstanceOf(ProcessProbe);
    expect(processProbe.sampling).toBe(false);
  });
});
