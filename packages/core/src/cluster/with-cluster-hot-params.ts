import type { Checker } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import type { HotParamChecker } from '../hot-param/hot-param-checker';
import { ClusterKeys } from './cluster-keys';
import { compileClusterHotParamRule } from './compile-cluster-hot-param-rule';

/**
 * One resource's compiled hotspot checkers, with those of QPS rules that have `cluster` set
 * wrapped to take their decision from the engine's cluster backend (unchanged without one).
 */
export function withClusterHotParams(checkers: readonly HotParamChecker[], ctx: CompileContext): Checker[] {
  const backend = ctx.cluster;
  if (backend === undefined || !checkers.some((checker) => checker.rule.cluster !== undefined)) return [...checkers];
  const keys = new ClusterKeys();
  return checkers.map((checker) =>
    checker.rule.cluster === undefined ? checker : compileClusterHotParamRule(checker.rule, checker, backend, keys, ctx),
  );
}
