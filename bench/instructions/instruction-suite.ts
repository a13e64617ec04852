/**
 * Instructions per call of the core cases (and, named with `--cases`, per request of the HTTP
 * cases), counted by valgrind's callgrind: the same figure on a busy machine as on a quiet one,
 * for an A/B of a change too small for timings on noisy cores.
 *
 *   npm run build && npx tsc -p bench
 *   node bench/dist/instructions/instruction-suite.js [--cases fg.sync.qps,http.express.noop] [--against <dir>]
 *
 * `--against` names another build of `@floodgate/core` (its `dist` directory: build the other
 * commit in a worktree), counted beside this checkout's, with the ratio.
 *
 * Each case runs in two processes (see instruction-runs.ts), which differ only in the number of
 * counted calls; the difference of their counts over the difference of their calls is the cost
 * of one call. V8 runs single-threaded and predictable, with fixed seeds, and the engine on a
 * clock that steps per read, so a count repeats to within a few instructions (an HTTP case's,
 * with the network between, within 0.4 % on Koa and Fastify when no full garbage collection
 * falls in one process's counted window and not in the other's, which the table marks: see
 * bench/README.md). For the HTTP cases the table also gives the count without the instructions
 * the processes spent collecting garbage (gc-instructions.ts), which such a collection does not
 * skew. Instructions are not time (a cache miss or a clock read on the hardware costs more than
 * its instructions): a change is shown by a count, and its time by `npm run bench`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { garbageCollection } from './gc-instructions';
import { INSTRUCTION_CASES } from './instruction-cases';
import { ALL_CASES, caseRun, runCounted } from './instruction-runs';

/** Processes at a time (one per core). */
const PARALLEL = 2;
const REFERENCE = 'fg.sync.qps';

interface Options {
  readonly cases: readonly string[];
  readonly against: string | undefined;
}

function parseOptions(args: readonly string[]): Options {
  let cases: readonly string[] = Object.keys(INSTRUCTION_CASES);
  let against: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = args[i + 1];
    if (arg === '--cases' && value !== undefined) {
      cases = value.split(',');
      const unknown = cases.filter((id) => !(id in ALL_CASES));
      if (unknown.length > 0)
        throw new Error(`unknown case ${unknown.join(', ')}; known: ${Object.keys(ALL_CASES).join(', ')}`);
      i++;
    } else if (arg === '--against' && value !== undefined) {
      against = join(resolve(value), 'index.js');
      i++;
    } else throw new Error(`usage: instruction-suite [--cases a,b] [--against <core dist dir>]; got ${String(arg)}`);
  }
  return { cases, against };
}

/** Runs `tasks` at most `PARALLEL` at a time, keeping their order. */
async function pooled<T>(tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return results;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (valgrind.status !== 0)
    throw new Error('valgrind was not found: install it (Debian: apt-get install valgrind) to count instructions');
  const builds: (string | undefined)[] = [undefined, ...(options.against === undefined ? [] : [options.against])];
  // One run per case and build (`caseRun` refuses an HTTP case another build).
  const jobs = options.cases.flatMap((id) =>
    builds.flatMap((build) => {
      const run = caseRun(id, build);
      return [run.fewer, run.more].map((calls) => ({ id, build, calls, run }));
    }),
  );
  process.stderr.write(`${valgrind.stdout.trim()}: ${jobs.length} processes, ${PARALLEL} at a time\n`);
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-instructions-'));
  const counts = await pooled(
    jobs.map((job) => async () => {
      // An HTTP case's profile is read for its collections' instructions (see gc-instructions.ts).
      const out = job.run.warmsUp ? join(dir, `${job.id}-${job.calls}.callgrind`) : '/dev/null';
      const counted = await runCounted(job.id, job.run, job.calls, [`--callgrind-out-file=${out}`]);
      const gc = job.run.warmsUp
        ? garbageCollection(readFileSync(out, 'utf8'))
        : { instructions: 0, fullCollections: 0 };
      const gcs = job.run.warmsUp ? `, ${gc.fullCollections} full GCs, ${gc.instructions} in GC` : '';
      process.stderr.write(
        `  ${job.id}${job.build === undefined ? '' : ' (against)'}, ${job.calls} calls: ${counted.instructions}${gcs}\n`,
      );
      return { ...counted, gc };
    }),
  ).finally(() => rmSync(dir, { recursive: true, force: true }));
  const perCall = new Map<string, number>();
  /** The same, less what the processes spent collecting garbage (HTTP cases). */
  const withoutGc = new Map<string, number>();
  /** Cases whose two processes made different numbers of full collections: their difference holds one. */
  const unevenGcs = new Map<string, string>();
  jobs.forEach((job, i) => {
    if (job.calls !== job.run.more) return;
    const [fewer, more] = [counts[i - 1]!, counts[i]!];
    const key = `${job.id}|${job.build ?? ''}`;
    const calls = job.run.more - job.run.fewer;
    perCall.set(key, (more.instructions - fewer.instructions) / calls);
    if (job.run.warmsUp)
      withoutGc.set(
        key,
        (more.instructions - more.gc.instructions - (fewer.instructions - fewer.gc.instructions)) / calls,
      );
    const [a, b] = [fewer.gc.fullCollections, more.gc.fullCollections];
    if (a !== b) unevenGcs.set(key, ` (full GCs ${a} / ${b})`);
  });
  const shown = (key: string): string => `${perCall.get(key)!.toFixed(0)}${unevenGcs.get(key) ?? ''}`;
  const reference = perCall.get(`${REFERENCE}|`);
  const gcColumn = withoutGc.size > 0;
  const header = ['case', 'what', 'instructions per call', ...(gcColumn ? ['without GC'] : []), `× ${REFERENCE}`];
  if (options.against !== undefined) header.push('against', 'this / against');
  const rows = options.cases.map((id) => {
    const own = perCall.get(`${id}|`)!;
    const mutator = withoutGc.get(`${id}|`);
    const row = [
      id,
      ALL_CASES[id]!,
      shown(`${id}|`),
      ...(gcColumn ? [mutator === undefined ? '' : mutator.toFixed(0)] : []),
      reference === undefined ? '' : (own / reference).toFixed(2),
    ];
    if (options.against !== undefined) {
      const other = perCall.get(`${id}|${options.against}`)!;
      row.push(shown(`${id}|${options.against}`), (own / other).toFixed(3));
    }
    return row;
  });
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  process.stdout.write(
    [line(header), line(header.map((_, i) => (i < 2 ? ':--' : '--:'))), ...rows.map(line)].join('\n') + '\n',
  );
  if (unevenGcs.size > 0)
    process.stdout.write(
      '\n"full GCs a / b": the two processes made a and b full collections while counted, so the figure\n' +
        'holds the difference (about a hundred requests a collection), not the requests alone: read "without GC".\n',
    );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
