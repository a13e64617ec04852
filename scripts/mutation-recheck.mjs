#!/usr/bin/env node
// Rechecks the surviving mutants of Stryker JSON reports against today's tests, without a new
// Stryker run: each survivor (and each mutant no test covered) is written into its source file,
// the tests of its rule kind run (`test/core/<kind>/`), and the file is restored. A mutant whose
// tests now fail has been killed since the run. Files changed since the run are skipped (the
// mutants' positions no longer hold). Prints one line per mutant and a count per file.
//
//   node scripts/mutation-recheck.mjs reports/mutation/flow-hot-param.json [<json>...] [--only <text in path>]
//
// A mutated expression is written in parentheses, as Stryker changes the syntax tree. Seconds
// per mutant (jest's cache stays warm); the working tree must be clean, and a file is
// restored even when the run is interrupted (SIGINT, SIGTERM).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
const inputs = args.filter((arg) => arg.endsWith('.json'));
if (inputs.length === 0)
  throw new Error('usage: node scripts/mutation-recheck.mjs <stryker json>... [--only <text in path>]');
if (execFileSync('git', ['status', '--porcelain', '--', 'packages'], { cwd: root, encoding: 'utf8' }).trim() !== '') {
  throw new Error(
    'packages/ has uncommitted changes: commit or stash them first (mutants are written into the sources)',
  );
}

let restore = () => {};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    restore();
    process.exit(1);
  });
}

const files = Object.assign({}, ...inputs.map((input) => JSON.parse(readFileSync(input, 'utf8')).files));
for (const [file, { source, mutants }] of Object.entries(files)) {
  if (only !== undefined && !file.includes(only)) continue;
  const path = join(root, file);
  if (readFileSync(path, 'utf8') !== source) {
    console.log(`${file}: changed since the run, skipped`);
    continue;
  }
  const kind = /src\/([^/]+)\//.exec(file)[1];
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lineStarts.push(i + 1);
  const offset = ({ line, column }) => lineStarts[line - 1] + column - 1;
  let killed = 0;
  let left = 0;
  for (const mutant of mutants) {
    if (mutant.status !== 'Survived' && mutant.status !== 'NoCoverage') continue;
    const { start, end } = mutant.location;
    restore = () => writeFileSync(path, source);
    writeFileSync(path, source.slice(0, offset(start)) + asWritten(mutant) + source.slice(offset(end)));
    let run;
    try {
      run = spawnSync('npx', ['jest', `test/core/${kind}`, '--selectProjects', 'standard', '--silent', '--bail'], {
        cwd: root,
        encoding: 'utf8',
        timeout: 120_000,
      });
    } finally {
      restore();
    }
    const verdict = run.status !== 0 ? 'killed' : 'survives';
    if (verdict === 'killed') killed++;
    else left++;
    console.log(
      `${file}:${start.line}:${start.column} ${mutant.mutatorName} ${JSON.stringify(mutant.replacement.slice(0, 60))}: ${verdict}`,
    );
  }
  console.log(`${file}: ${killed} killed since the run, ${left} still survive`);
}

/**
 * The replacement as Stryker applies it, to the syntax tree: an expression in parentheses, so
 * `a || b` put in place of `a && b` inside `a && b && c` stays one operand (as text it would not).
 * Blocks and `case` labels are statements, written as they are.
 */
function asWritten({ mutatorName, replacement }) {
  return mutatorName === 'BlockStatement' || /^(case\b|default\s*:)/.test(replacement)
    ? replacement
    : `(${replacement})`;
}
