import { Floodgate, type Entry, type EntryOptions } from '@floodgate/core';
import type { HotParamRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';

/** An engine on a manual clock (starting at `start`) with the given hotspot rules. */
export function engineWith(rules: HotParamRuleOptions[], start = 0): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock(start);
  const fg = new Floodgate({ clock });
  fg.loadHotParamRules(rules);
  return { fg, clock };
}

/** Enters `resource` until the first block (exiting each entry at once); returns the passes. */
export function passesUntilBlocked(fg: Floodgate, resource: string, options?: EntryOptions, limit = 10_000): number {
  for (let passed = 0; passed < limit; passed++) {
    const entry = fg.tryEntry(resource, options);
    if (!isEntry(entry)) return passed;
    entry.exit();
  }
  throw new Error(`no block within ${limit} calls`);
}

/** How many of `calls` calls pass (exiting each entry at once). */
export function passesOf(fg: Floodgate, resource: string, options: EntryOptions | undefined, calls: number): number {
  let passed = 0;
  for (let i = 0; i < calls; i++) {
    const entry = fg.tryEntry(resource, options);
    if (!isEntry(entry)) continue;
    passed++;
    entry.exit();
  }
  return passed;
}

/** Whether `tryEntry` passed the call. */
export function isEntry(result: unknown): result is Entry {
  return typeof result === 'object' && result !== null && 'exit' in result;
}

/** `{ args: [value] }`. */
export function arg(value: unknown): EntryOptions {
  return { args: [value] };
}
