import type { CompileContext } from '../engine/compile-context';
import { AuthorityChecker } from './authority-checker';
import type { AuthorityRule } from './authority-rule';

/** Compiles one resource's authority rules into checkers. */
export function compileAuthorityRules(rules: readonly AuthorityRule[], _ctx: CompileContext): AuthorityChecker[] {
  return rules.map((rule) => new AuthorityChecker(rule));
}
