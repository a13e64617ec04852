import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

describe('history', () => {
  it('is empty for a resource that is not tracked', () => {
    expect(new Floodgate().history('nothing')).toEqual([]);
  });

  it('lists each completed second of the minute window, oldest first, without the current one', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.loadFlowRules([{ resource: 'r', threshold: 2 }]);
    await clock.advance(10_000);
    fg.entry('r').exit();
    fg.entry('r').exit();
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await clock.advance(1000);
    const entry = fg.entry('r');
    entry.traceError(new Error('x'));
    await clock.advance(40);
    entry.exit();
    await clock.advance(1000);
    expect(fg.history('r')).toEqual([
      { startMs: 10_000, pass: 2, block: 1, success: 2, error: 0, totalRtMs: 0, avgRtMs: 0, minRtMs: 0 },
      { startMs: 11_000, pass: 1, block: 0, success: 1, error: 1, totalRtMs: 40, avgRtMs: 40, minRtMs: 40 },
    ]);
  });

  it('lists only the seconds that started at or after sinceMs', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    for (let i = 0; i < 3; i++) {
      fg.entry('r').exit();
      await clock.advance(1000);
    }
    expect(fg.history('r', 1000).map((s) => s.startMs)).toEqual([1000, 2000]);
  });

  it('keeps at most the last 60 seconds', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    for (let i = 0; i < 90; i++) {
      fg.entry('r').exit();
      await clock.advance(1000);
    }
    const history = fg.history('r');
    expect(history.length).toBeLessThanOrEqual(60);
    expect(history.at(-1)?.startMs).toBe(89_000);
    expect(history[0]!.startMs).toBeGreaterThanOrEqual(89_000 - 59_000);
  });
});
