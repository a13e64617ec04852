/**
 * `npm run bench [-- --quick] [--only core,memory,http,grpc,cluster,overload,outbound] [--runs N] [--out file] [--no-write]`
 * `node bench/dist/index.js --render bench/results/latest.json` (re-renders a saved run)
 * `npm run bench -- --only cluster --into bench/results/latest.json` (re-measures one suite of a saved run)
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
import { runClusterSuite, type ClusterSuiteResult } from './cluster/cluster-suite';
import { runGrpcSuite, type GrpcSuiteResult, type GrpcSuiteSettings } from './grpc/grpc-suite';
import { runHttpSuite, type HttpFrameworkResult, type HttpSuiteSettings } from './http/http-suite';
import { parseBenchOptions } from './lib/bench-options';
import { commitMeasured, machineInfo } from './lib/machine-info';
import { canPin } from './lib/pinned-command';
import { runMemorySuite, type MemorySubjectResult } from './memory/memory-suite';
import { runDeclareSuite, type DeclareResult } from './rules/declare-suite';
import { runOverloadSuite, type OverloadSuiteResult } from './overload/overload-suite';
import { runOutboundSuite, type OutboundSuiteResult } from './outbound/outbound-suite';
import { quoteSummary } from './report/quote-summary';
import { renderMarkdown, renderReport, type BenchRun } from './report/render-report';

/** Cores: servers on one, everything that measures from the outside (load, workers) on the other. */
const SERVER_CORE = 0;
const MEASURE_CORE = 1;

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2));
  const distDir = __dirname; // bench/dist
  const root = resolve(distDir, '..', '..');
  if (options.render !== undefined) {
    const saved = JSON.parse(readFileSync(resolve(options.render), 'utf8')) as BenchRun & { startedAt: string };
    const run: BenchRun = { ...saved, startedAt: new Date(saved.startedAt) };
    for (const section of renderReport(run)) process.stdout.write(`\n## ${section.title}\n\n${section.body}\n`);
    if (options.write) writeReport(root, resolve(options.render).replace(/\.json$/, '.md'), run);
    return;
  }
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
  };
  for (const section of renderReport(run)) process.stdout.write(`\n## ${section.title}\n\n${section.body}\n`);
  if (options.into !== undefined) {
    // The saved run keeps its other suites; the ones measured now replace theirs.
    const path = resolve(options.into);
    const saved = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const merged = {
      ...saved,
      ...Object.fromEntries(
        Object.entries(run).filter(([key]) => options.suites.some((suite) => key.startsWith(suite))),
      ),
    } as unknown as BenchRun & { startedAt: string };
    writeFileSync(path, `${JSON.stringify(merged, null, 1)}\n`);
    writeReport(root, path.replace(/\.json$/, '.md'), { ...merged, startedAt: new Date(merged.startedAt) });
    log(`wrote the suites ${options.suites.join(', ')} into ${relative(root, path)} and its .md`);
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

/** Writes a run's report; the committed one (bench/results/latest.md) is also quoted in the README. */
function writeReport(root: string, path: string, run: BenchRun): void {
  writeFileSync(path, renderMarkdown(run));
  if (resolve(path) === resolve(root, 'bench', 'results', 'latest.md')) quoteSummary(join(root, 'README.md'), run);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
