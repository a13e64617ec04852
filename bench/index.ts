/**
 * `npm run bench [-- --quick] [--only core,memory,http,grpc,cluster,overload,outbound] [--runs N] [--out file] [--no-write]`
 * `node bench/dist/index.js --render bench/results/latest.json` (re-renders a saved run)
 * `npm run bench -- --only cluster --into bench/results/latest.json` (re-measures one suite of a saved run)
 * `npm run bench -- --only core --runs 3 --into bench/results/latest.json --append` (adds 3 processes to its core figures;
 *   core, http and overload can be added to)
 * `... --before saved.json[,saved.json]` (shows the core and HTTP figures of runs before a change beside this run's)
 *
 * Runs every benchmark of issues #7 and #14 side by side with the bare frameworks and the peer
 * libraries, prints the tables and writes bench/results/latest.md, with the raw figures in
 * latest.json beside it (quick mode writes quick.md/quick.json, so a smoke run never
 * overwrites the committed figures). Whenever bench/results/latest.md is written, the README's
 * Performance section gets the same summary.
 * Expects the packages and the harness to be built (`npm run bench` does it: `tsc -b` then
 * `tsc -p bench`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { runCoreSuite, type CoreCaseResult } from './core/core-suite';
import { clusterSuiteProblem, runClusterSuite, type ClusterSuiteResult } from './cluster/cluster-suite';
import { runGrpcSuite, type GrpcSuiteResult, type GrpcSuiteSettings } from './grpc/grpc-suite';
import { runHttpSuite, type HttpFrameworkResult, type HttpSuiteSettings } from './http/http-suite';
import { parseBenchOptions } from './lib/bench-options';
import { commitMeasured, machineInfo } from './lib/machine-info';
import { canPin } from './lib/pinned-command';
import { runMemorySuite, type MemorySubjectResult } from './memory/memory-suite';
import { runDeclareSuite, type DeclareResult } from './rules/declare-suite';
import { runOverloadSuite, type OverloadSuiteResult } from './overload/overload-suite';
import { runOutboundSuite, type OutboundSuiteResult } from './outbound/outbound-suite';
import { appendRun, mergeBefore, replaceSuites, type BeforeFigures, type SavedRun } from './report/combine-runs';
import { quoteSummary } from './report/quote-summary';
import { renderMarkdown, renderReport, type BenchRun } from './report/render-report';

/** Cores: servers on one, everything that measures from the outside (load, workers) on the other. */
const SERVER_CORE = 0;
const MEASURE_CORE = 1;

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2));
  const distDir = __dirname; // bench/dist
  const root = resolve(distDir, '..', '..');
  const before = options.before.length === 0 ? undefined : loadBefore(root, options.before);
  if (options.render !== undefined) {
    const saved = readRun(resolve(options.render));
    const run: BenchRun = { ...saved, startedAt: new Date(saved.startedAt), ...(before ? { before } : {}) };
    for (const section of renderReport(run)) process.stdout.write(`\n## ${section.title}\n\n${section.body}\n`);
    if (options.write) {
      const out = options.out === undefined ? resolve(options.render).replace(/\.json$/, '.md') : resolve(options.out);
      writeReport(root, out, run);
      // The before figures are kept with the run, so the next --render shows them without the flag.
      if (before !== undefined) writeFileSync(out.replace(/(\.md)?$/, '.json'), `${JSON.stringify(run, null, 1)}\n`);
    }
    return;
  }
  const problem = options.suites.includes('cluster') ? clusterSuiteProblem() : undefined;
  if (problem !== undefined) throw new Error(problem);
  const started = Date.now();
  const log = (line: string): void => {
    process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
  };
  const machine = machineInfo(root);
  const commit = commitMeasured(root);
  const quick = options.quick;
  const runs = options.runs;
  const coreSettings = { processes: runs, passes: 2, minCpuMs: quick ? 40 : 300, batchSamples: quick ? 512 : 4096 };
  const memorySettings = { values: quick ? 100_000 : 1_000_000, processes: runs };
  const clusterSettings = { processes: runs, seconds: quick ? 0.1 : 2 };
  const overloadSettings = { rounds: runs, seconds: quick ? 2 : 8, overload: 2, deadlineMs: 1000, mixedLoads: [2, 4] };
  const outboundSettings = { processes: runs, calls: quick ? 2000 : 20_000, rounds: quick ? 1 : 3 };
  const httpSettings: Omit<HttpSuiteSettings, 'log'> = {
    rounds: runs,
    seconds: quick ? 1 : 8, // autocannon runs at least about 1 s whatever it is asked
    warmSeconds: quick ? 1 : 10, // every server of a framework at once: about 2 s of load each
    connections: quick ? 50 : 100,
    pipelining: 10,
    serverCore: SERVER_CORE,
    loadCore: MEASURE_CORE,
  };
  const grpcSettings: Omit<GrpcSuiteSettings, 'log'> = {
    rounds: runs,
    seconds: quick ? 1 : 8,
    callsPerSec: quick ? 500 : 1000,
    inProcessCalls: quick ? 20_000 : 100_000,
    serverCore: SERVER_CORE,
    loadCore: MEASURE_CORE,
  };
  log(
    `bench ${quick ? '(quick) ' : ''}suites ${options.suites.join(', ')}; load average ${machine.loadStart.toFixed(2)}`,
  );

  let core: CoreCaseResult[] | undefined;
  let rules: DeclareResult[] | undefined;
  let memory: MemorySubjectResult[] | undefined;
  let http: HttpFrameworkResult[] | undefined;
  let grpc: GrpcSuiteResult | undefined;
  let cluster: ClusterSuiteResult | undefined;
  let overload: OverloadSuiteResult | undefined;
  let outbound: OutboundSuiteResult | undefined;
  if (options.suites.includes('core')) {
    log('core, in-process');
    core = await runCoreSuite(distDir, { ...coreSettings, core: MEASURE_CORE, log });
  }
  if (options.suites.includes('rules')) {
    log('rules: declaring one by one');
    rules = await runDeclareSuite(distDir, { counts: [250, 1000, 10_000], processes: runs, core: MEASURE_CORE, log });
  }
  if (options.suites.includes('memory')) {
    log('memory');
    memory = await runMemorySuite(root, { ...memorySettings, core: MEASURE_CORE, log });
  }
  if (options.suites.includes('http')) {
    log('http');
    http = await runHttpSuite(distDir, { ...httpSettings, log });
  }
  if (options.suites.includes('grpc')) {
    log('grpc: unary calls, bare and guarded, server and client CPU');
    grpc = await runGrpcSuite(distDir, { ...grpcSettings, log });
  }
  if (options.suites.includes('cluster')) {
    log('cluster mode over Redis');
    cluster = await runClusterSuite(distDir, {
      ...clusterSettings,
      serverCore: SERVER_CORE,
      clientCore: MEASURE_CORE,
      log,
    });
  }
  if (options.suites.includes('overload')) {
    log('overload: a CPU-bound Express route at 2× its capacity; mixed priorities at 2× and 4×');
    overload = await runOverloadSuite(distDir, {
      ...overloadSettings,
      serverCore: SERVER_CORE,
      loadCore: MEASURE_CORE,
      log,
    });
  }
  if (options.suites.includes('outbound')) {
    log('outbound: undici calls bare, through Floodgate, through cockatiel');
    outbound = await runOutboundSuite(distDir, {
      ...outboundSettings,
      serverCore: SERVER_CORE,
      clientCore: MEASURE_CORE,
      log,
    });
  }
  machine.loadEnd = loadavg()[0]!;

  const run: BenchRun = {
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    quick,
    runs,
    startedAt: new Date(started),
    seconds: (Date.now() - started) / 1000,
    ...(commit === undefined ? {} : { commit }),
    machine,
    pinned: canPin(),
    ...(core ? { core, coreSettings } : {}),
    ...(rules ? { rules } : {}),
    ...(memory ? { memory, memorySettings } : {}),
    ...(http ? { http, httpSettings } : {}),
    ...(grpc ? { grpc, grpcSettings } : {}),
    ...(cluster ? { cluster, clusterSettings } : {}),
    ...(overload ? { overload, overloadSettings } : {}),
    ...(outbound ? { outbound, outboundSettings } : {}),
    ...(before ? { before } : {}),
  };
  for (const section of renderReport(run)) process.stdout.write(`\n## ${section.title}\n\n${section.body}\n`);
  if (options.into !== undefined) {
    // The saved run keeps its other suites; the ones measured now replace theirs, or with
    // --append are added to them. Before figures given now replace the saved ones.
    const path = resolve(options.into);
    const saved = readRun(path);
    const combined: SavedRun = options.append
      ? appendRun(saved, run, options.suites)
      : replaceSuites(saved, run, options.suites);
    const merged: SavedRun = before ? { ...combined, before } : combined;
    writeFileSync(path, `${JSON.stringify(merged, null, 1)}\n`);
    writeReport(root, path.replace(/\.json$/, '.md'), { ...merged, startedAt: new Date(merged.startedAt) });
    log(
      `${options.append ? 'added' : 'wrote'} the suites ${options.suites.join(', ')} ${options.append ? 'to those of' : 'into'} ${relative(root, path)} and its .md`,
    );
  } else if (options.write) {
    const out = resolve(root, options.out ?? join('bench', 'results', quick ? 'quick.md' : 'latest.md'));
    mkdirSync(dirname(out), { recursive: true });
    writeReport(root, out, run);
    const raw = out.replace(/(\.md)?$/, '.json');
    writeFileSync(raw, `${JSON.stringify(run, null, 1)}\n`);
    log(`wrote ${relative(root, out)} and ${relative(root, raw)}`);
  }
  log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
}

function readRun(path: string): SavedRun & { startedAt: string } {
  return JSON.parse(readFileSync(path, 'utf8')) as SavedRun & { startedAt: string };
}

/** The saved runs of `--before`, merged by suite; each named as given, relative to the repository when inside it. */
function loadBefore(root: string, paths: readonly string[]): BeforeFigures {
  return mergeBefore(
    paths.map((given) => {
      const path = resolve(given);
      const inRepo = !relative(root, path).startsWith('..');
      return { path: inRepo ? relative(root, path) : path, run: readRun(path) };
    }),
  );
}

/** Writes a run's report; the committed one (bench/results/latest.md) is also quoted in the README. */
function writeReport(root: string, path: string, run: BenchRun): void {
  writeFileSync(path, renderMarkdown(run));
  if (resolve(path) === resolve(root, 'bench', 'results', 'latest.md')) quoteSummary(join(root, 'README.md'), run);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
