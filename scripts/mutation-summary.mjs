#!/usr/bin/env node
// Summarises Stryker's JSON report (reports/mutation/mutation.json, from `npm run mutation`)
// as bench/results/mutation.md: the mutation score per rule kind and every surviving mutant,
// so the report that matters is reviewable in a diff (the HTML report stays in reports/).
// Run by `npm run mutation` after Stryker; by hand, `node scripts/mutation-summary.mjs [<json>...] [<md>]`
// merges the reports of runs over different kinds (a file in a later report replaces the same
// file in an earlier one). Whatever follows the NOTES marker in the existing file (the judgement
// of the survivors) is kept.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const inputs = args.filter((arg) => arg.endsWith('.json'));
if (inputs.length === 0) inputs.push(join(root, 'reports/mutation/mutation.json'));
const output = args.find((arg) => arg.endsWith('.md')) ?? join(root, 'bench/results/mutation.md');
const reports = inputs.map((input) => JSON.parse(readFileSync(input, 'utf8')));
const report = { ...reports.at(-1), files: Object.assign({}, ...reports.map((r) => r.files)) };

const NOTES = '<!-- Notes below are kept by scripts/mutation-summary.mjs -->';
const KINDS = { flow: 'flow', 'circuit-breaker': 'circuit breaker', 'hot-param': 'hotspot' };
/** Stryker's statuses: detected ones count for the score, undetected against it, the rest not at all. */
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

const rows = new Map();
const survivors = [];
for (const [file, { source, mutants }] of Object.entries(report.files)) {
  const path = relative(root, join(root, file)).replaceAll('\\', '/');
  const kind = Object.keys(KINDS).find((k) => path.includes(`/src/${k}/`)) ?? 'other';
  const row = rows.get(kind) ?? { killed: 0, timeout: 0, survived: 0, noCoverage: 0, invalid: 0, ignored: 0 };
  rows.set(kind, row);
  const lines = source.split('\n');
  for (const mutant of mutants) {
    switch (mutant.status) {
      case 'Killed':
        row.killed++;
        break;
      case 'Timeout':
        row.timeout++;
        break;
      case 'Survived':
        row.survived++;
        break;
      case 'NoCoverage':
        row.noCoverage++;
        break;
      case 'Ignored':
        row.ignored++;
        break;
      default:
        row.invalid++; // CompileError, RuntimeError: not valid mutants
    }
    if (UNDETECTED.has(mutant.status)) {
      const { line, column } = mutant.location.start;
      const original = (lines[line - 1] ?? '').trim();
      survivors.push({
        kind,
        where: `${path}:${line}:${column}`,
        status: mutant.status,
        mutator: mutant.mutatorName,
        original,
        replacement: mutant.replacement ?? '',
      });
    }
  }
}

const score = (r) => {
  const detected = r.killed + r.timeout;
  const valid = detected + r.survived + r.noCoverage;
  return valid === 0 ? 'n/a' : `${((100 * detected) / valid).toFixed(1)} %`;
};
const cell = (text) => `\`${String(text).replaceAll('|', '\\|').replaceAll('`', "'").slice(0, 100)}\``;

const total = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, invalid: 0, ignored: 0 };
const out = [];
out.push('# Mutation testing of the rule kinds');
out.push('');
out.push(
  `Stryker ${report.framework?.version ?? ''} (${report.testFramework?.name ?? 'jest'} runner, TypeScript checker) over \`packages/core/src/{${[...rows.keys()].join(',')}}\` (the kinds this run mutated), with every test under \`test/core\` but the HTTP and legacy-decorator ones. Regenerate with \`npm run mutation\` (hours on 2 cores from scratch; incremental afterwards). Score = mutants detected (killed or timed out) / valid mutants (detected, survived, or not covered); mutants that do not compile are not counted.`,
);
out.push('');
out.push('| kind | score | killed | timed out | survived | no coverage | not valid |');
out.push('|:--|--:|--:|--:|--:|--:|--:|');
for (const [kind, label] of Object.entries(KINDS)) {
  const r = rows.get(kind);
  if (r === undefined) continue;
  for (const key of Object.keys(total)) total[key] += r[key];
  out.push(`| ${label} | ${score(r)} | ${r.killed} | ${r.timeout} | ${r.survived} | ${r.noCoverage} | ${r.invalid} |`);
}
out.push(
  `| **all** | **${score(total)}** | ${total.killed} | ${total.timeout} | ${total.survived} | ${total.noCoverage} | ${total.invalid} |`,
);
out.push('');
out.push(`## Surviving mutants (${survivors.length})`);
out.push('');
if (survivors.length === 0) out.push('None.');
else {
  out.push('| where | status | mutator | original line | replacement |');
  out.push('|:--|:--|:--|:--|:--|');
  for (const s of survivors)
    out.push(`| ${s.where} | ${s.status} | ${s.mutator} | ${cell(s.original)} | ${cell(s.replacement)} |`);
}
out.push('');
const previous = existsSync(output) ? readFileSync(output, 'utf8') : '';
const notes = previous.includes(NOTES) ? previous.slice(previous.indexOf(NOTES)) : `${NOTES}\n`;
writeFileSync(output, `${out.join('\n')}\n${notes}`);
console.log(
  `${relative(root, output)}: ${score(total)} over ${[...rows.keys()].map((k) => KINDS[k] ?? k).join(', ')}; ${survivors.length} surviving mutants.`,
);
