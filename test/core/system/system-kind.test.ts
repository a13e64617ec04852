import { Floodgate } from '@floodgate/core';
import { ManualClock, ManualProbe, type SystemProbe } from '@floodgate/core/testing';
import { processProbe } from '../../../packages/core/src/system/system-probe';

/** A probe that counts its starts and stops. */
class CountingProbe extends ManualProbe implements SystemProbe {
  starts = 0;
  override start(): () => void {
    this.starts++;
    return super.start();
  }
}

describe('the system kind and its probe', () => {
  it('has the probe sample only while a rule that reads signals is in force', () => {
    const probe = new ManualProbe();
    const fg = new Floodgate({ clock: new ManualClock(), probe });
    expect(probe.sampling).toBe(false);
    fg.loadSystemRules([{ maxCpuUsage: 0.8 }]);
    expect(probe.sampling).toBe(true);
    fg.loadSystemRules([{ maxQps: 100, maxConcurrency: 10, maxAvgRtMs: 500 }]);
    expect(probe.sampling).toBe(false);
    fg.loadSystemRules([{ maxRssBytes: 2 ** 31 }]);
    expect(probe.sampling).toBe(true);
    fg.loadSystemRules([]);
    expect(probe.sampling).toBe(false);
  });

  it('keeps its claim on the probe across a reload of unchanged rules, and hands over without a gap when a rule changes', () => {
    const probe = new CountingProbe();
    const fg = new Floodgate({ clock: new ManualClock(), probe });
    fg.loadSystemRules([{ maxEventLoopDelayMs: 100 }]);
    fg.loadSystemRules([{ maxEventLoopDelayMs: 100 }]);
    expect(probe.starts).toBe(1);
    fg.loadSystemRules([{ maxEventLoopDelayMs: 200 }]);
    expect(probe.starts).toBe(2);
    expect(probe.sampling).toBe(true);
  });

  it('uses the shared process probe by default, sampling only while a rule needs it', () => {
    const fg = new Floodgate();
    expect(fg.probe).toBe(processProbe);
    fg.loadSystemRules([{ maxEventLoopUtilization: 0.99 }]);
    expect(processProbe.sampling).toBe(true);
    fg.loadSystemRules([]);
    expect(processProbe.sampling).toBe(false);
  });

  it('refuses a probe option without read() and start()', () => {
    expect(() => new Floodgate({ probe: { read: () => ({}) } as never })).toThrow(
      'options.probe: must have read() and start() methods',
    );
  });
});
