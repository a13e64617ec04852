/**
 * Checks a benchmark runs once on its engine before measuring a case, so a figure is of the call
 * its label names: a rule that stopped refusing would make a "blocked" figure a pass's. Each
 * throws naming the resource. They take an engine of any build of the core (the instruction
 * count's `--against`): a block error is told by its brand, which every build shares.
 */
import { isBlockError, type EntryOptions, type Floodgate } from '@floodgate/core';

/** An engine of this build or another: what the checks call. */
type Engine = Pick<Floodgate, 'tryEntry'>;

/** `resource` admits the call, and no rule in shadow would have refused it. */
export function expectPass(fg: Engine, resource: string, options?: EntryOptions): void {
  const entry = fg.tryEntry(resource, options);
  if (isBlockError(entry)) throw new Error(`${resource} should pass, got ${entry.code}`);
  entry.exit();
  if (entry.wouldBlock !== undefined) throw new Error(`${resource} should pass unnoticed, got a would-be block`);
}

/** `resource` refuses the call with `code`. */
export function expectBlock(fg: Engine, resource: string, code: string, options?: EntryOptions): void {
  const result = fg.tryEntry(resource, options);
  if (!isBlockError(result) || result.code !== code) throw new Error(`${resource} should be refused with ${code}`);
}

/** `resource` admits the call as one a rule in shadow would have refused with `code`. */
export function expectWouldBlock(fg: Engine, resource: string, code: string): void {
  const entry = fg.tryEntry(resource);
  if (isBlockError(entry) || entry.wouldBlock?.code !== code)
    throw new Error(`${resource} should pass as a would-be block (${code})`);
  entry.exit();
}
