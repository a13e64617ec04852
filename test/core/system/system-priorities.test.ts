import { Entry, Floodgate, RuleValidationError, type Priority } from '@floodgate/core';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import { engineWith } from './helpers';

/** Holds `count` inbound calls of `priority` in flight; returns them, or the first refusal's limit. */
function hold(fg: Floodgate, count: number, priority: Priority): Entry[] {
  return Array.from({ length: count }, () => {
    const entry = fg.tryEntry('GET /a', { inbound: true, priority });
    if (!(entry instanceof Entry)) throw new Error(`refused: ${entry.message}`);
    return entry;
  });
}

/** Whether one more inbound call of `priority` passes (it exits at once). */
function passes(fg: Floodgate, priority: Priority): boolean {
  const entry = fg.tryEntry('GET /a', { inbound: true, priority });
  if (!(entry instanceof Entry)) return false;
  entry.exit();
  return true;
}

/** Makes the BBR check fail: 100 calls completed at 1 s each in the last minute, then `inFlight` held. */
async function overloaded(fg: Floodgate, clock: ManualClock, inFlight: number, priority: Priority): Promise<Entry[]> {
  const first = hold(fg, 3, 'critical');
  await clock.advance(1000);
  for (const entry of first) entry.exit();
  return hold(fg, inFlight, priority);
}

describe('system rules by priority', () => {
  it('refuses sheddable calls from 80 % of maxConcurrency, default ones at it, critical ones from 110 %', () => {
    const { fg } = engineWith([{ maxConcurrency: 10 }]);
    const held = hold(fg, 8, 'critical');
    expect(passes(fg, 'sheddable')).toBe(false);
    expect(passes(fg, 'default')).toBe(true);
    held.push(...hold(fg, 2, 'default'));
    expect(passes(fg, 'default')).toBe(false);
    expect(passes(fg, 'critical')).toBe(true);
    held.push(...hold(fg, 1, 'critical'));
    expect(passes(fg, 'critical')).toBe(false);
    for (const entry of held) entry.exit();
  });

  it('scales maxQps by priority within the second', () => {
    const { fg } = engineWith([{ maxQps: 10 }]);
    let sheddable = 0;
    while (passes(fg, 'sheddable')) sheddable++;
    let other = 0;
    while (passes(fg, 'default')) other++;
    let critical = 0;
    while (passes(fg, 'critical')) critical++;
    expect([sheddable, other, critical]).toEqual([8, 2, 1]);
  });

  it('sheds sheddable calls first on a load limit, while the BBR check fails', async () => {
    const probe = new ManualProbe({ eventLoopUtilization: 0.85 });
    const clock = new ManualClock(10_000);
    const fg = new Floodgate({ clock, probe });
    fg.loadSystemRules([{ maxEventLoopUtilization: 0.9 }]);
    const held = await overloaded(fg, clock, 4, 'critical');
    // 0.85 is over 0.8 × 0.9 = 0.72 (sheddable) but under 0.9 (default).
    expect(fg.tryEntry('GET /a', { inbound: true, priority: 'sheddable' })).toMatchObject({
      code: 'ERR_SYSTEM_BLOCKED',
      limit: 'maxEventLoopUtilization',
    });
    expect(passes(fg, 'default')).toBe(true);
    probe.set({ eventLoopUtilization: 0.95 });
    expect(passes(fg, 'default')).toBe(false);
    expect(passes(fg, 'critical')).toBe(true); // 0.95 < 1.1 × 0.9 = 0.99
    probe.set({ eventLoopUtilization: 1 });
    expect(passes(fg, 'critical')).toBe(false);
    for (const entry of held) entry.exit();
  });

  it('takes the factors of the rule that sets the limit', () => {
    const { fg } = engineWith([{ maxConcurrency: 10, priorityFactors: { sheddable: 0.5, critical: 1 } }]);
    const held = hold(fg, 5, 'default');
    expect(passes(fg, 'sheddable')).toBe(false);
    held.push(...hold(fg, 5, 'default'));
    expect(passes(fg, 'critical')).toBe(false);
    for (const entry of held) entry.exit();
  });

  it('keeps priorityFactors in getRules() only where given, resolved', () => {
    const { fg } = engineWith([{ maxConcurrency: 10 }, { maxQps: 5, priorityFactors: { sheddable: 0.5 } }]);
    expect(fg.getRules().system).toEqual([
      { maxConcurrency: 10, retryAfterMs: 1000 },
      { maxQps: 5, retryAfterMs: 1000, priorityFactors: { sheddable: 0.5, critical: 1.1 } },
    ]);
  });

  it('names each bad factor by its path', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    let error: unknown;
    try {
      fg.loadSystemRules([{ maxQps: 1, priorityFactors: { sheddable: 0, critical: 0.5, urgent: 2 } as never }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuleValidationError);
    expect((error as RuleValidationError).issues.map((issue) => issue.path)).toEqual([
      'system[0].priorityFactors.urgent',
      'system[0].priorityFactors.sheddable',
      'system[0].priorityFactors.critical',
    ]);
  });

  it('refuses a priority that is not one of the three', () => {
    const { fg } = engineWith([{ maxQps: 1 }]);
    expect(() => fg.tryEntry('GET /a', { inbound: true, priority: 'urgent' as never })).toThrow(
      "priority must be 'critical', 'default' or 'sheddable', got \"urgent\"",
    );
  });
});
