import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { StatisticNode } from '../../../packages/core/src/kernel/statistic-node';

describe('statistics of a resource', () => {
  it('counts passes, blocks, exits, errors and response times', async () => {
    const clock = new ManualClock(10_000);
    const fg = new Floodgate({ clock });
    fg.loadFlowRules([{ resource: 'r', threshold: 2 }]);
    const a = fg.entry('r');
    const b = fg.entry('r');
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(fg.stats('r')!.concurrency).toBe(2);
    await clock.advance(30);
    a.exit();
    await clock.advance(20);
    b.traceError(new Error('boom'));
    b.exit();
    expect(fg.stats('r')).toEqual({
      resource: 'r',
      concurrency: 0,
      lastSecond: { pass: 2, block: 1, success: 2, error: 1, totalRtMs: 80, avgRtMs: 40, minRtMs: 30 },
      lastMinute: { pass: 2, block: 1, success: 2, error: 1, totalRtMs: 80, avgRtMs: 40, minRtMs: 30 },
    });
  });

  it('keeps the minute window after the second window has rolled over', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.entry('r').exit();
    await clock.advance(5_000);
    const stats = fg.stats('r')!;
    expect(stats.lastSecond.pass).toBe(0);
    expect(stats.lastMinute.pass).toBe(1);
  });

  it('forgets the minute window after sixty seconds', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.entry('r').exit();
    await clock.advance(60_001);
    expect(fg.stats('r')!.lastMinute).toMatchObject({ pass: 0, success: 0, minRtMs: 0, avgRtMs: 0 });
  });

  it('reports undefined for a resource never entered', () => {
    expect(new Floodgate().stats('nothing')).toBeUndefined();
  });
});

describe('StatisticNode.maxSuccessQps', () => {
  it('is the most completions of one second in the last minute', () => {
    const node = new StatisticNode();
    for (let i = 0; i < 7; i++) node.addExit(1500, 1, 10, false, false);
    for (let i = 0; i < 3; i++) node.addExit(30_500, 1, 10, false, false);
    expect(node.maxSuccessQps(40_000)).toBe(7);
    expect(node.maxSuccessQps(61_500)).toBe(3);
  });
});
