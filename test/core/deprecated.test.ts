// The names that moved out of the root in 0.2.0 are still importable from it until 0.3.0, marked
// deprecated (src/deprecated.ts): the very values and types of their new entry points. This file
// imports them from the root on purpose; nothing else in the repository does.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import * as root from '@floodgate/core';
import * as metrics from '@floodgate/core/metrics';
import * as rules from '@floodgate/core/rules';
import * as testing from '@floodgate/core/testing';
import { codeBlocks, docFiles, read, ROOT } from '../docs/markdown';

/** Compiles only when `A` and `B` are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_: T): void => undefined;

describe('the deprecated names at the root', () => {
  it('are the values of their new entry points, so instanceof and identity hold', () => {
    expect(root.ManualClock).toBe(testing.ManualClock);
    expect(root.ManualProbe).toBe(testing.ManualProbe);
    expect(root.DIAGNOSTICS_CHANNELS).toBe(metrics.DIAGNOSTICS_CHANNELS);
    expect(root.normalizeRuleSet).toBe(rules.normalizeRuleSet);
    expect(root.parseRulesJson).toBe(rules.parseRulesJson);
    expect(root.ruleSetJson).toBe(rules.ruleSetJson);
    expect(root.fileRuleSource).toBe(rules.fileRuleSource);
    expect(root.FileRuleSource).toBe(rules.FileRuleSource);
    expect(new root.ManualClock(5)).toBeInstanceOf(testing.ManualClock);
  });

  it('are the types of their new entry points', () => {
    same<Same<root.ManualClock, testing.ManualClock>>(true);
    same<Same<root.ManualProbe, testing.ManualProbe>>(true);
    same<Same<root.Clock, testing.Clock>>(true);
    same<Same<root.DiagnosticsMessage<'block'>, metrics.DiagnosticsMessage<'block'>>>(true);
    same<Same<root.CircuitStateChangeEvent, metrics.CircuitStateChangeEvent>>(true);
    same<Same<root.ClusterFallbackEvent, metrics.ClusterFallbackEvent>>(true);
    same<Same<root.RuleSet, rules.RuleSet>>(true);
    same<Same<root.RuleSetOptions, rules.RuleSetOptions>>(true);
    same<Same<root.RolloutOptions, rules.RolloutOptions>>(true);
    same<Same<root.RuleMode, rules.RuleMode>>(true);
    same<Same<root.FlowRuleOptions, rules.FlowRuleOptions>>(true);
    same<Same<root.CircuitBreakerRuleOptions, rules.CircuitBreakerRuleOptions>>(true);
    same<Same<root.HotParamRuleOptions, rules.HotParamRuleOptions>>(true);
    same<Same<root.KeySourceOptions, rules.KeySourceOptions>>(true);
    same<Same<root.KeyMatch, rules.KeyMatch>>(true);
    same<Same<root.PriorityFactorsOptions, rules.PriorityFactorsOptions>>(true);
    same<Same<root.ApiGroupOptions, rules.ApiGroupOptions>>(true);
    same<Same<root.ApiGroupPattern, rules.ApiGroupPattern>>(true);
    same<Same<root.SystemRuleOptions, rules.SystemRuleOptions>>(true);
    same<Same<root.AuthorityRuleOptions, rules.AuthorityRuleOptions>>(true);
    same<Same<root.PushbackRuleOptions, rules.PushbackRuleOptions>>(true);
    same<Same<root.AdaptiveThrottlingRuleOptions, rules.AdaptiveThrottlingRuleOptions>>(true);
    same<Same<root.RetryBudgetRuleOptions, rules.RetryBudgetRuleOptions>>(true);
    same<Same<root.FileRuleSource, rules.FileRuleSource>>(true);
    same<Same<root.FileRuleSourceOptions, rules.FileRuleSourceOptions>>(true);
  });

  it('still load rules written with the old imports', () => {
    const fg = new root.Floodgate({ clock: new root.ManualClock() });
    const flow: root.FlowRuleOptions = { resource: 'search', threshold: 1 };
    const set: root.RuleSetOptions = { flow: [flow] };
    fg.loadRules(root.normalizeRuleSet(root.parseRulesJson(root.ruleSetJson(set))) as root.RuleSetOptions);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'search', threshold: 1 })]);
  });
});

/** The names src/deprecated.ts exports. */
function deprecatedNames(): Set<string> {
  const text = readFileSync(join(ROOT, 'packages/core/src/deprecated.ts'), 'utf8');
  return new Set([...text.matchAll(/^export (?:const|type) (\w+)/gm)].map((m) => m[1]!));
}

/** The TypeScript files of the packages (core's own sources aside), tests, examples, bench and scripts. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) out.push(relative(ROOT, path));
    }
  };
  for (const dir of ['packages', 'test', 'examples', 'bench', 'scripts']) walk(join(ROOT, dir));
  return out.filter((file) => !file.startsWith('packages/core/src/') && file !== 'test/core/deprecated.test.ts');
}

/** `file: name` for each deprecated name `code` imports (or re-exports) from the root. */
function rootImportsOf(code: string, file: string, names: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const from = statement.moduleSpecifier;
    if (from === undefined || !ts.isStringLiteral(from) || from.text !== '@floodgate/core') continue;
    const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
    if (bindings === undefined) continue;
    if (ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) continue;
    for (const element of bindings.elements) {
      const name = (element.propertyName ?? element.name).text;
      if (names.has(name)) found.push(`${file}: ${name}`);
    }
  }
  return found;
}

describe('imports of the deprecated names', () => {
  it('are nowhere in the code, tests, examples or docs: each imports from the new entry point', () => {
    const names = deprecatedNames();
    expect(names.size).toBeGreaterThan(0);
    const found = [
      ...sourceFiles().flatMap((file) => rootImportsOf(read(file), file, names)),
      ...docFiles().flatMap((file) =>
        codeBlocks(read(file))
          .filter((block) => block.lang === 'ts' || block.lang === 'typescript')
          .flatMap((block) => rootImportsOf(block.code, `${file}:${block.line}`, names)),
      ),
    ];
    expect(found).toEqual([]);
  });
});
