/**
 * Where a case's instructions go, by function: the case counted under callgrind in two
 * processes (as instruction-suite.ts does), with V8 writing the address of every function it
 * compiles (`--perf-basic-prof`), so the code callgrind sees only by address is named; each
 * function's own instructions (not those of what it calls) are taken from both runs, and their
 * difference over the difference of the calls is its share of one call. A function V8 inlined is
 * counted in the one it was inlined into; `--no-inlining` counts each apart (slower code: read
 * the shares, not the total).
 *
 *   node bench/dist/instructions/instruction-profile.js <case> [--no-inlining] [--top N] [--callers <pattern>]
 *
 * `--callers <pattern>` lists calls instead: each caller and callee whose `callee <- caller`
 * matches the regular expression, with the instructions per call of everything the callee did
 * for that caller (`'<- JS:.*packages/'`: the calls Floodgate's code makes that V8 did not inline).
 * On Express, whose full collections move code, a JIT address can name code that was there before.
 *
 * A builtin in the list is usually the sign of a slow path: `KeyedLoadIC` (an element load the
 * optimizer could not inline), `RecordWrite` (a write barrier), `JSConstructStubGeneric` (a
 * construction not inlined), `CallFunction` (a call not inlined).
 */
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readCallgrind, splitCallKey, type CallgrindCosts } from './callgrind-profile';
import { caseRun, runCounted, type CaseRun } from './instruction-runs';

/** The repository's root, left out of the file names the list shows. */
const ROOT = `${resolve(__dirname, '..', '..', '..')}/`;

/** One JIT function V8 listed: where its code starts, how long it is, its name. */
interface MappedCode {
  readonly start: number;
  readonly size: number;
  readonly name: string;
}

/** Runs `id` with `calls` counted calls under callgrind; returns its profile and perf map paths. */
async function profileRun(
  id: string,
  run: CaseRun,
  calls: number,
  dir: string,
  extra: readonly string[],
): Promise<[string, string]> {
  const out = join(dir, `${calls}.callgrind`);
  const { pid } = await runCounted(
    id,
    run,
    calls,
    [`--callgrind-out-file=${out}`],
    // the log --perf-basic-prof opens, kept out of the working directory
    ['--perf-basic-prof', `--logfile=${join(dir, `${calls}.v8.log`)}`, ...extra],
  );
  // valgrind runs node in its own process: the map V8 wrote is named by that pid
  const map = join(dir, `${calls}.map`);
  renameSync(join(tmpdir(), `perf-${pid}.map`), map);
  return [out, map];
}

function readMap(path: string): MappedCode[] {
  const codes: MappedCode[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match !== null) codes.push({ start: parseInt(match[1]!, 16), size: parseInt(match[2]!, 16), name: match[3]! });
  }
  return codes.sort((a, b) => a.start - b.start);
}

/** The JIT function holding `address`, by binary search over the sorted map. */
function codeAt(codes: readonly MappedCode[], address: number): string {
  let lo = 0;
  let hi = codes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const code = codes[mid]!;
    if (address < code.start) hi = mid - 1;
    else if (address >= code.start + code.size) lo = mid + 1;
    else return code.name;
  }
  return '(JIT code not in the map)';
}

/** A profile's costs, its JIT addresses named from V8's perf map. */
function profileCosts(profile: string, codes: readonly MappedCode[]): CallgrindCosts {
  return readCallgrind(readFileSync(profile, 'utf8'), (given) => {
    const address = /^0x([0-9a-f]+)$/.exec(given);
    return address === null ? given : codeAt(codes, parseInt(address[1]!, 16));
  });
}

/** Per call, what `after` holds more than `before`, largest first (by size). */
function perCallRows(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  calls: number,
): { readonly name: string; readonly instructions: number }[] {
  return [...new Set([...before.keys(), ...after.keys()])]
    .map((name) => ({ name, instructions: ((after.get(name) ?? 0) - (before.get(name) ?? 0)) / calls }))
    .sort((a, b) => Math.abs(b.instructions) - Math.abs(a.instructions));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const id = args[0];
  if (id === undefined)
    throw new Error('usage: instruction-profile <case> [--no-inlining] [--top N] [--callers <pattern>]');
  const run = caseRun(id);
  const topAt = args.indexOf('--top');
  const top = topAt === -1 ? 30 : Number(args[topAt + 1]);
  if (!Number.isInteger(top) || top < 1)
    throw new Error(`--top takes a whole number >= 1, got ${String(args[topAt + 1])}`);
  const extra = args.includes('--no-inlining') ? ['--no-turbo-inlining'] : [];
  const callersAt = args.indexOf('--callers');
  const callers = callersAt === -1 ? undefined : new RegExp(args[callersAt + 1] ?? '');
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-profile-'));
  try {
    const [fewer, more] = await Promise.all(
      [run.fewer, run.more].map((calls) => profileRun(id, run, calls, dir, extra)),
    );
    const before = profileCosts(fewer![0], readMap(fewer![1]));
    const after = profileCosts(more![0], readMap(more![1]));
    const calls = run.more - run.fewer;
    const perCall = perCallRows(before.self, after.self, calls);
    const total = perCall.reduce((sum, row) => sum + row.instructions, 0);
    const lines = [`${id}: ${total.toFixed(0)} instructions per call${extra.length > 0 ? ' (no inlining)' : ''}`, ''];
    const shown = (name: string): string => name.replaceAll(ROOT, '').slice(0, 140);
    if (callers === undefined) {
      lines.push('| instructions per call | function |', '| --: | :-- |');
      for (const row of perCall.slice(0, top)) lines.push(`| ${row.instructions.toFixed(1)} | ${shown(row.name)} |`);
    } else {
      // The calls whose `callee <- caller` matches, each with all that the callee did for them.
      lines.push('| instructions per call (inclusive) | callee | caller |', '| --: | :-- | :-- |');
      const rows = perCallRows(before.calls, after.calls, calls).filter((row) => callers.test(row.name));
      for (const row of rows.slice(0, top)) {
        const { caller, callee } = splitCallKey(row.name);
        lines.push(`| ${row.instructions.toFixed(1)} | ${shown(callee)} | ${shown(caller)} |`);
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
