import type { RuleReader } from '../rules/rule-reader';
import type { HotParamRule } from './hot-param-rule';

// PLACEHOLDER (issue #4 replaces this file): accepts nothing yet.
/** Validates one hotspot rule and resolves its defaults. */
export function normalizeHotParamRule(input: unknown, path: string, reader: RuleReader): HotParamRule | undefined {
  reader.object(input, path);
  reader.fail(path, 'hotspot rules are not implemented yet');
  return undefined;
}
