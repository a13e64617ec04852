import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine() {
  const clock = new ManualClock();
  const fg = new Floodgate({ clock });
  fg.loadRules({
    circuitBreakers: [
      { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ],
  });
  return { fg, clock };
}

describe('Entry.conclude', () => {
  it('records the response time and outcome now, while the call keeps its concurrency until exit', async () => {
    const { fg, clock } = engine();
    const entry = fg.entry('r');
    await clock.advance(30);
    entry.traceError(new Error('502'));
    entry.conclude();
    expect(entry.concluded).toBe(true);
    expect(fg.circuitState('r')[0]!.state).toBe('open');
    expect(fg.stats('r')!.lastSecond).toMatchObject({ success: 1, error: 1, totalRtMs: 30 });
    expect(fg.stats('r')!.concurrency).toBe(1);
    await clock.advance(500);
    entry.exit();
    expect(fg.stats('r')!.concurrency).toBe(0);
    expect(fg.stats('r')!.lastSecond).toMatchObject({ success: 1, totalRtMs: 30 });
  });

  it('ignores errors and pushbacks traced after the conclusion', () => {
    const { fg } = engine();
    const entry = fg.entry('r');
    entry.conclude();
    entry.traceError(new Error('late'));
    entry.tracePushback(1000);
    entry.exit();
    expect(entry.hasError).toBe(false);
    expect(entry.pushbackMs).toBeUndefined();
    expect(fg.circuitState('r')[0]!.state).toBe('closed');
  });

  it('makes a later cancel() end the call as exit() does: it ran', () => {
    const { fg } = engine();
    const entry = fg.entry('r');
    entry.conclude();
    entry.cancel();
    expect(entry.exited).toBe(true);
    expect(fg.stats('r')!.concurrency).toBe(0);
    expect(fg.totals('r')).toMatchObject({ pass: 1, cancel: 0, success: 1 });
  });

  it('is idempotent and does nothing once the entry ended', () => {
    const { fg } = engine();
    const entry = fg.entry('r');
    entry.conclude();
    entry.conclude();
    entry.exit();
    entry.conclude();
    expect(fg.totals('r')).toMatchObject({ success: 1 });
  });

  it('decides a half-open probe at the conclusion, by the outcome it recorded', async () => {
    const { fg, clock } = engine();
    const failed = fg.entry('r');
    failed.traceError(new Error('down'));
    failed.exit();
    await clock.advance(1000);
    const probe = fg.entry('r');
    probe.conclude();
    expect(fg.circuitState('r')[0]!.state).toBe('closed');
    probe.exit();
    expect(fg.circuitState('r')[0]!.state).toBe('closed');
  });
});

describe('Entry.attempt', () => {
  it("is 'first' unless the call says it is a retry or a hedge", () => {
    const fg = new Floodgate();
    expect(fg.entry('r').attempt).toBe('first');
    expect(fg.entry('r', { attempt: 'retry' }).attempt).toBe('retry');
    expect(fg.entry('r', { attempt: 'hedge' }).attempt).toBe('hedge');
  });
});
