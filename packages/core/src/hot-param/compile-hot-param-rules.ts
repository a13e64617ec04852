import type { Checker } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import type { HotParamRule } from './hot-param-rule';

// PLACEHOLDER (issue #4 replaces this file).
/** Compiles one resource's hotspot rules into checkers, keeping the state of unchanged rules. */
export function compileHotParamRules(_rules: readonly HotParamRule[], _ctx: CompileContext): Checker[] {
  return [];
}
