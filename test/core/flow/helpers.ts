import { Floodgate, type EntryOptions } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';

/** An engine on a manual clock (starting at 0) with the given flow rules. */
export function engineWith(rules: FlowRuleOptions[], start = 0): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock(start);
  const fg = new Floodgate({ clock });
  fg.loadFlowRules(rules);
  return { fg, clock };
}

/** Enters `resource` until the first block (exiting each entry at once); returns the passes. */
export function passesUntilBlocked(fg: Floodgate, resource: string, options?: EntryOptions, limit = 10_000): number {
  for (let passed = 0; passed < limit; passed++) {
    const entry = fg.tryEntry(resource, options);
    if (!('exit' in entry)) return passed;
    entry.exit();
  }
  throw new Error(`no block within ${limit} calls`);
}
