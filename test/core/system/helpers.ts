import { Entry, Floodgate, type BlockError } from '@floodgate/core';
import type { SystemRuleOptions } from '@floodgate/core/rules';
import { ManualClock, ManualProbe, type SystemSignals } from '@floodgate/core/testing';

/** An engine on a manual clock (starting at 10 s) and a manual probe, with the given system rules. */
export function engineWith(
  rules: SystemRuleOptions[],
  signals: Partial<SystemSignals> = {},
): { fg: Floodgate; clock: ManualClock; probe: ManualProbe } {
  const clock = new ManualClock(10_000);
  const probe = new ManualProbe(signals);
  const fg = new Floodgate({ clock, probe });
  fg.loadSystemRules(rules);
  return { fg, clock, probe };
}

/** An inbound entry on `resource`, or the block error that refused it. */
export function inbound(fg: Floodgate, resource = 'GET /a'): Entry | BlockError {
  return fg.tryEntry(resource, { inbound: true });
}

/** Holds `count` inbound calls in flight (on resources `r0`, `r1`, ...); throws if one is refused. */
export function hold(fg: Floodgate, count: number): Entry[] {
  return Array.from({ length: count }, (_, i) => {
    const entry = inbound(fg, `r${i % 3}`);
    if (!(entry instanceof Entry)) throw new Error(`call ${i} was refused: ${entry.message}`);
    return entry;
  });
}

/**
 * Completes `count` inbound calls of `rtMs` each, all started now and exited `rtMs` later (the
 * clock moves by `rtMs`).
 */
export async function complete(fg: Floodgate, clock: ManualClock, count: number, rtMs: number): Promise<void> {
  const entries = hold(fg, count);
  await clock.advance(rtMs);
  for (const entry of entries) entry.exit();
}
