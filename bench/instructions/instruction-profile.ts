/**
 * Where a case's instructions go, by function: the case counted under callgrind in two
 * processes (as instruction-suite.ts does), with V8 writing the address of every function it
 * compiles (`--perf-basic-prof`), so the code callgrind sees only by address is named; each
 * function's own instructions (not those of what it calls) are taken from both runs, and their
 * difference over the difference of the calls is its share of one call. A function V8 inlined is
 * counted in the one it was inlined into; `--no-inlining` counts each apart (slower code: read
 * the shares, not the total).
 *
 *   node bench/dist/instructions/instruction-profile.js <case> [--no-inlining] [--top N]
 *
 * A builtin in the list is usually the sign of a slow path: `KeyedLoadIC` (an element load the
 * optimizer could not inline), `RecordWrite` (a write barrier), `JSConstructStubGeneric` (a
 * construction not inlined), `CallFunction` (a call not inlined).
 */
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

/**
 * Each function's own instructions in a callgrind profile (the cost lines under `fn=`, less the
 * inclusive costs of the calls it makes, which follow `calls=` lines), JIT addresses named.
 */
function selfCosts(profile: string, codes: readonly MappedCode[]): Map<string, number> {
  const names = new Map<string, string>();
  const costs = new Map<string, number>();
  let fn: string | undefined;
  let callCost = false;
  const named = (id: string, given: string | undefined): string => {
    if (given !== undefined) {
      const address = /^0x([0-9a-f]+)$/.exec(given);
      names.set(id, address === null ? given : codeAt(codes, parseInt(address[1]!, 16)));
    }
    return names.get(id) ?? `(${id})`;
  };
  for (const line of readFileSync(profile, 'utf8').split('\n')) {
    const compressed = /^(c?fn)=\((\d+)\)(?: (.*))?$/.exec(line);
    if (compressed !== null) {
      const name = named(compressed[2]!, compressed[3]);
      if (compressed[1] === 'fn') fn = name;
      continue;
    }
    if (line.startsWith('calls=')) {
      callCost = true;
      continue;
    }
    const cost = /^(?:[+-]?\d+|\*) (\d+)/.exec(line);
    if (cost === null) continue;
    if (callCost) callCost = false;
    else if (fn !== undefined) costs.set(fn, (costs.get(fn) ?? 0) + Number(cost[1]));
  }
  return costs;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const id = args[0];
  if (id === undefined) throw new Error('usage: instruction-profile <case> [--no-inlining] [--top N]');
  const run = caseRun(id);
  const topAt = args.indexOf('--top');
  const top = topAt === -1 ? 30 : Number(args[topAt + 1]);
  if (!Number.isInteger(top) || top < 1)
    throw new Error(`--top takes a whole number >= 1, got ${String(args[topAt + 1])}`);
  const extra = args.includes('--no-inlining') ? ['--no-turbo-inlining'] : [];
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-profile-'));
  try {
    const [fewer, more] = await Promise.all(
      [run.fewer, run.more].map((calls) => profileRun(id, run, calls, dir, extra)),
    );
    const before = selfCosts(fewer![0], readMap(fewer![1]));
    const after = selfCosts(more![0], readMap(more![1]));
    const perCall = [...new Set([...before.keys(), ...after.keys()])]
      .map((name) => ({
        name,
        instructions: ((after.get(name) ?? 0) - (before.get(name) ?? 0)) / (run.more - run.fewer),
      }))
      .sort((a, b) => Math.abs(b.instructions) - Math.abs(a.instructions));
    const total = perCall.reduce((sum, row) => sum + row.instructions, 0);
    const lines = [`${id}: ${total.toFixed(0)} instructions per call${extra.length > 0 ? ' (no inlining)' : ''}`, ''];
    lines.push('| instructions per call | function |', '| --: | :-- |');
    for (const row of perCall.slice(0, top))
      lines.push(`| ${row.instructions.toFixed(1)} | ${row.name.replaceAll(ROOT, '').slice(0, 140)} |`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
