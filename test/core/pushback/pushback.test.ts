import { Entry, Floodgate, UpstreamPausedError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { blockResponse } from '@floodgate/core/http';

function engine(maxPauseMs?: number): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock(5000);
  const fg = new Floodgate({ clock });
  fg.loadRules({ pushback: [{ resource: 'r', ...(maxPauseMs === undefined ? {} : { maxPauseMs }) }] });
  return { fg, clock };
}

/** One call that the dependency refuses, asking for `ms` of pause. */
function pushedBack(fg: Floodgate, ms: number): void {
  const entry = fg.entry('r');
  entry.tracePushback(ms);
  entry.exit();
}

describe('pushback rules', () => {
  it('default to a pause of at most a minute', () => {
    const { fg } = engine();
    expect(fg.getRules().pushback).toEqual([{ resource: 'r', maxPauseMs: 60_000 }]);
  });

  it('name a bad maxPauseMs by path', () => {
    expect(() => new Floodgate().loadRules({ pushback: [{ resource: 'r', maxPauseMs: 0 }] })).toThrow(
      'pushback[0].maxPauseMs: must be a finite number > 0 and <= 2147483647, got 0',
    );
  });

  it('refuse every call until the pause the dependency asked for is over', async () => {
    const { fg, clock } = engine();
    pushedBack(fg, 2000);
    const refused = fg.tryEntry('r');
    expect(refused).toBeInstanceOf(UpstreamPausedError);
    expect(refused).toMatchObject({ code: 'ERR_UPSTREAM_PAUSED', kind: 'pushback', retryAfterMs: 2000 });
    await clock.advance(1500);
    expect(fg.tryEntry('r')).toMatchObject({ retryAfterMs: 500 });
    await clock.advance(500);
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });

  it('cap a pause at maxPauseMs', () => {
    const { fg } = engine(10_000);
    pushedBack(fg, 3_600_000);
    expect(fg.tryEntry('r')).toMatchObject({ retryAfterMs: 10_000 });
  });

  it('keep the longest pause asked for', () => {
    const { fg } = engine();
    const first = fg.entry('r');
    const second = fg.entry('r');
    first.tracePushback(3000);
    first.exit();
    second.tracePushback(1000);
    second.exit();
    expect(fg.tryEntry('r')).toMatchObject({ retryAfterMs: 3000 });
  });

  it('learn the pause when the entry concludes, not when it exits', () => {
    const { fg } = engine();
    const entry = fg.entry('r');
    entry.tracePushback(1000);
    entry.conclude();
    expect(fg.tryEntry('r')).toBeInstanceOf(UpstreamPausedError);
    entry.exit();
  });

  it('ignore a call that asked for no pause or a pause of 0', () => {
    const { fg } = engine();
    fg.entry('r').exit();
    pushedBack(fg, 0);
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });

  it('keep a pause that is on across a reload of the same rule, and drop it with the rule', () => {
    const { fg } = engine();
    pushedBack(fg, 1000);
    fg.loadRules({ pushback: [{ resource: 'r' }] });
    expect(fg.tryEntry('r')).toBeInstanceOf(UpstreamPausedError);
    fg.loadRules({ pushback: [] });
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });

  it('are answered 503 with Retry-After over HTTP', () => {
    const { fg } = engine();
    pushedBack(fg, 1500);
    const error = fg.tryEntry('r') as UpstreamPausedError;
    expect(error.refusal).toBe('capacity');
    const response = blockResponse(error);
    expect(response.status).toBe(503);
    expect(response.headers['Retry-After']).toBe('2');
  });

  it('refuse a bad pushback value loudly', () => {
    const { fg } = engine();
    const entry = fg.entry('r');
    expect(() => entry.tracePushback(Number.NaN)).toThrow('retryAfterMs must be a finite number >= 0, got NaN');
    expect(() => entry.tracePushback(-1)).toThrow(RangeError);
    entry.exit();
  });
});
