import type { CoreCaseResult } from '../core/core-suite';
import type { ClusterSuiteResult } from '../cluster/cluster-suite';
import { grpcMedian, type GrpcSuiteResult, type GrpcSuiteSettings, type GrpcVariantResult } from '../grpc/grpc-suite';
import { GRPC_VARIANTS, type GrpcVariant } from '../grpc/grpc-variant';
import { medianOf, type HttpFrameworkResult, type HttpSuiteSettings } from '../http/http-suite';
import { HTTP_VARIANTS, USER_COUNT } from '../http/http-variant';
import {
  formatCount,
  formatMb,
  formatMs,
  formatNs,
  formatRange,
  formatRatio,
  formatSigned,
  plural,
  title,
} from '../lib/format';
import type { MachineInfo } from '../lib/machine-info';
import { markdownTable } from '../lib/markdown-table';
import { median, sumOf } from '../lib/median';
import type { MemorySubjectResult } from '../memory/memory-suite';
import type { DeclareResult } from '../rules/declare-suite';
import {
  CEILING_PAIRS,
  CEILING_PHASE_REQUESTS,
  ceilingRatio,
  criticalP99Ratio,
  goodputRatio,
  overloadMedian,
  ownCapacities,
  roundBaselines,
  type MixedRun,
  type OverloadSuiteResult,
} from '../overload/overload-suite';
import type { OutboundSuiteResult } from '../outbound/outbound-suite';
import {
  beforeCase,
  beforeVariant,
  combinedSuites,
  pooledSuites,
  type BeforeFigures,
  type RunOrigin,
} from './combine-runs';
import { evaluateTargets, heapGrowth, type SuiteResults } from './evaluate-targets';
import { PEER_OF, renderSummary } from './render-summary';

/** Everything one bench run produced, and how it ran. */
export interface BenchRun extends SuiteResults {
  readonly command: string;
  readonly quick: boolean;
  /** Processes or rounds per figure. */
  readonly runs: number;
  readonly startedAt: Date;
  readonly seconds: number;
  /** The commit measured (`git describe --always --dirty`), when the run recorded it. */
  readonly commit?: string;
  readonly machine: MachineInfo;
  readonly coreSettings?: { processes: number; passes: number; minCpuMs: number; batchSamples: number };
  readonly rules?: readonly DeclareResult[];
  readonly memorySettings?: { values: number; processes: number };
  readonly httpSettings?: Omit<HttpSuiteSettings, 'log'>;
  readonly grpcSettings?: Omit<GrpcSuiteSettings, 'log'>;
  readonly cluster?: ClusterSuiteResult;
  readonly clusterSettings?: { processes: number; seconds: number };
  readonly overload?: OverloadSuiteResult;
  readonly overloadSettings?: {
    rounds: number;
    seconds: number;
    overload: number;
    deadlineMs: number;
    mixedLoads?: readonly number[];
  };
  readonly outbound?: OutboundSuiteResult;
  readonly outboundSettings?: { processes: number; calls: number; rounds: number };
  readonly pinned: boolean;
  /**
   * Figures of the same cases from saved runs on the same machine before a change (`--before`),
   * shown beside this run's; copied in, so a saved run renders them without the files.
   */
  readonly before?: BeforeFigures;
  /**
   * Runs whose core, HTTP or overload measurements were added to this run's (`--into saved.json --append`):
   * those suites' figures are medians over every process or round of this run and these.
   */
  readonly appended?: readonly RunOrigin[];
  /**
   * Runs that measured suites of this run again in place of its own (`--into saved.json`): those
   * suites' figures are theirs (with the runs appended to them since).
   */
  readonly remeasured?: readonly RunOrigin[];
}

/**
 * The sections of the report, each a markdown string (printed to stdout and written to the
 * results file): the summary, what was measured on what, the targets, every suite's tables, then
 * the method.
 */
export function renderReport(run: BenchRun): { title: string; body: string }[] {
  const sections: { title: string; body: string }[] = [];
  sections.push({ title: 'Summary', body: renderSummary(run) });
  sections.push({ title: 'What was measured, on what', body: renderSetup(run) });
  sections.push({ title: 'Targets', body: renderTargets(run) });
  if (run.core) sections.push({ title: 'Core, in-process', body: renderCore(run.core, run) });
  if (run.rules) sections.push({ title: 'Declaring rules one by one', body: renderRules(run.rules, run) });
  if (run.memory)
    sections.push({
      title: 'Memory: distinct hotspot values vs rate-limiter-flexible',
      body: renderMemory(run.memory),
    });
  if (run.http)
    sections.push({
      title: 'HTTP: each framework bare, with Floodgate, with its usual limiter',
      body: renderHttp(run.http, run),
    });
  if (run.grpc)
    sections.push({ title: 'gRPC: unary calls through grpc-js, bare and guarded', body: renderGrpc(run.grpc, run) });
  if (run.cluster) sections.push({ title: 'Cluster mode over Redis', body: renderCluster(run.cluster, run) });
  if (run.overload)
    sections.push({
      title: 'Overload: a CPU-bound Express route at 2× its capacity',
      body: renderOverload(run.overload, run),
    });
  if (run.outbound)
    sections.push({
      title: 'Outbound: undici calls bare, through Floodgate, through cockatiel',
      body: renderOutbound(run.outbound, run),
    });
  sections.push({ title: 'Method', body: renderMethod(run) });
  return sections;
}

/** The whole report as one markdown document: the result of one run, nothing from earlier runs. */
export function renderMarkdown(run: BenchRun): string {
  const when = run.startedAt.toISOString().slice(0, 16).replace('T', ' ');
  const warnings = [
    run.quick ? '**Quick mode: a smoke run, figures indicative only, never to be quoted.**' : '',
    run.runs < 2 && run.appended === undefined
      ? `**Single run** (\`--runs ${run.runs}\`): each figure was taken once: not for quoting.`
      : '',
  ].filter(Boolean);
  const head = [
    '# Floodgate benchmarks',
    '',
    `The result of one run of \`${run.command}\`, started ${when} UTC, ${Math.round(run.seconds)} s` +
      `${run.commit === undefined ? '' : `, on commit \`${run.commit}\``}` +
      `${run.remeasured === undefined ? '' : `, its ${combinedSuites(run.remeasured)} figures measured again by ${plural(run.remeasured.length, 'later run', 'later runs')}`}` +
      `${run.appended === undefined ? '' : `, with the ${combinedSuites(run.appended)} measurements of ${plural(run.appended.length, 'later run', 'later runs')} added to its own`}. ` +
      `Every figure below comes from ${run.appended === undefined && run.remeasured === undefined ? 'that run' : 'those runs'}${run.before === undefined ? '' : ', except the "before" ones beside them, from the earlier runs named under "What was measured, on what"'}; its raw data is ` +
      '`latest.json` beside this file, and `node bench/dist/index.js --render bench/results/latest.json` renders this page again ' +
      '(after `npm run bench` or `tsc -b && tsc -p bench`). `npm run bench` measures anew and overwrites both; earlier runs are kept in `history/`.',
    ...(warnings.length > 0 ? ['', warnings.join(' ')] : []),
  ].join('\n');
  return `${head}\n\n${renderReport(run)
    .map((s) => `## ${s.title}\n\n${s.body}`)
    .join('\n\n')}\n`;
}

/** The machine, the load on it, the code and the versions measured. */
function renderSetup(run: BenchRun): string {
  const m = run.machine;
  // By the load before the run: at its end the bench's own processes (on both cores) are in it.
  const busy = m.loadStart > m.cores * 0.5;
  const versions = Object.entries(m.versions)
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
  return [
    `- **Machine**: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB; Node ${m.node} (V8 ${m.v8}).`,
    `- **Load**: load average (1 min) ${m.loadStart.toFixed(2)} at the start, ${m.loadEnd.toFixed(2)} at the end (with the bench's own processes)` +
      `${busy ? ': **the machine was busy: absolute figures are noisy, ratios within a run are what counts**' : ''}.`,
    `- **Suites**: ${suitesRun(run).join(', ')}; ${perFigure(run)} per figure.`,
    ...originLines(run),
    "- **Code measured**: `tsc -b` builds every package to `dist/` (the JavaScript a user's build runs) and `tsc -p bench` builds the harness; everything runs on plain `node`, no loader, no source maps. `@floodgate/*` resolve to their `dist/`.",
    `- **Pinning**: ${run.pinned ? 'with `taskset`: HTTP servers on core 0, the load generator and every in-process worker on core 1' : 'taskset not available: processes are not pinned'}.`,
    `- **Versions**: ${versions}. cockatiel 4 and opossum 10 need Node 22, so the peers are cockatiel 3 and opossum 9 here.`,
  ].join('\n');
}

/** How many processes or rounds each figure is the median of; per suite once runs were appended. */
function perFigure(run: BenchRun): string {
  const counts = pooledSuites(run).map(({ suite, samples }) =>
    suite === 'core'
      ? `core ${plural(samples, 'process', 'processes')}`
      : `${suite === 'http' ? 'HTTP' : suite} ${plural(samples, 'round', 'interleaved rounds')}`,
  );
  const all = plural(run.runs, 'process or round', 'processes or interleaved rounds');
  return counts.length === 0 ? all : `${counts.join(', ')} (the others ${all})`;
}

/** A saved run in a few words: its command, commit, date and load, and its CPU when not `machine`'s. */
function describeOrigin(o: RunOrigin, machine: BenchRun['machine']): string {
  return (
    `${o.path === undefined ? '' : `\`${o.path}\`: `}\`${o.command}\`${o.commit === undefined ? '' : ` on commit \`${o.commit}\``}, ` +
    `started ${o.startedAt.slice(0, 16).replace('T', ' ')} UTC, load average ${o.loadStart.toFixed(2)} → ${Number.isFinite(o.loadEnd) ? o.loadEnd.toFixed(2) : 'n/a'}` +
    `${o.cpu === undefined || o.cpu === machine.cpu ? '' : `, **on another CPU: ${o.cpu}**`} (${combinedSuites([o])})`
  );
}

/** The runs appended to this one, and the runs the before figures come from. */
function originLines(run: BenchRun): string[] {
  const lines: string[] = [];
  if (run.appended !== undefined)
    lines.push(
      `- **Repeated runs**: the ${combinedSuites(run.appended)} figures are medians over every process or round of this run and of ${plural(run.appended.length, 'run', 'runs')} added to it (\`--into … --append\`): ` +
        `${run.appended.map((o) => describeOrigin(o, run.machine)).join('; ')}.`,
    );
  if (run.remeasured !== undefined)
    lines.push(
      `- **Measured again**: the ${combinedSuites(run.remeasured)} figures replace this run's own, from ${plural(run.remeasured.length, 'later run', 'later runs')} (\`--into …\`): ` +
        `${run.remeasured.map((o) => describeOrigin(o, run.machine)).join('; ')}.`,
    );
  const before = run.before;
  if (before !== undefined) {
    const counts = [
      ...(before.core && before.coreSettings
        ? [`core over ${plural(before.coreSettings.processes, 'process', 'processes')}`]
        : []),
      ...(before.http && before.httpSettings
        ? [`HTTP over ${plural(before.httpSettings.rounds, 'round', 'rounds')}`]
        : []),
    ];
    lines.push(
      `- **Before**: the "before" figures are the same cases in saved runs on this machine (\`--before\`), medians ${counts.join(', ')}: ` +
        `${before.runs.map((o) => describeOrigin(o, run.machine)).join('; ')}. A case those runs lack shows no before figure.`,
    );
  }
  return lines;
}

function suitesRun(run: BenchRun): string[] {
  const suites: [string, unknown][] = [
    ['core', run.core],
    ['rules', run.rules],
    ['memory', run.memory],
    ['http', run.http],
    ['grpc', run.grpc],
    ['cluster', run.cluster],
    ['overload', run.overload],
    ['outbound', run.outbound],
  ];
  return suites.filter(([, result]) => result !== undefined).map(([name]) => name);
}

/** How each suite measures, and how its figures are made. */
function renderMethod(run: BenchRun): string {
  const lines = [
    'Every figure is measured side by side with the bare framework and the peer libraries in the same run, and reported as the median over fresh processes (core, rules, memory, cluster) or interleaved rounds (HTTP, overload).',
    '',
  ];
  if (run.coreSettings) {
    const c = run.coreSettings;
    lines.push(
      `- **Core**: mitata \`measure()\` (batched calls, timer overhead excluded), ${plural(c.processes, 'fresh process', 'fresh processes')} × ${plural(c.passes, 'pass', 'passes')}, at least ${c.minCpuMs} ms of calls per measurement in samples of ${c.batchSamples} calls. ` +
        'Each process sets up every case on one engine (one resource per case), warms every case first (so call sites are as polymorphic as in an app using every feature), ' +
        "then measures each case once per pass, in reverse order on every other pass, with a full GC before each. A sample is mitata's median time per call; the figure is the median of all samples.",
    );
  }
  if (run.memorySettings) {
    lines.push(
      `- **Memory**: ${run.memorySettings.values.toLocaleString('en-US')} distinct keys (\`user-0\`, \`user-1\`, ...) fed to each limiter in a fresh \`node --expose-gc\` process, ` +
        `${plural(run.memorySettings.processes, 'process', 'processes')} each; heap = \`heapUsed + arrayBuffers\` after two full GCs; medians over processes.`,
    );
  }
  if (run.httpSettings) {
    const h = run.httpSettings;
    lines.push(
      `- **HTTP**: autocannon against 127.0.0.1, ${h.connections} connections × ${h.pipelining} pipelined, ${h.seconds} s per run (req/s and server CPU counted from the first response to the last) after ${h.warmSeconds} s of unrecorded warm-up (every server at once); ` +
        `${plural(h.rounds, 'interleaved round', 'interleaved rounds')} (${(run.http?.[0]?.variants.map((v) => v.variant) ?? HTTP_VARIANTS).join(', ')}; reversed on odd rounds). Requests cycle through ${USER_COUNT} users (\`x-user-id\`), and every limiter keys on that header. ` +
        "Ratios are taken within a round (variant / bare of the same round) and the median over rounds is reported. Server CPU per response is read from /proc: it counts only the server's own work, so it is the figure least disturbed by a busy machine.",
    );
  }
  lines.push(
    `- **Rules, cluster, overload${run.outbound ? ', outbound' : ''}**: their method follows their tables above. \`bench/README.md\` lists every suite, and how to run one alone.`,
  );
  return lines.join('\n');
}

function renderTargets(run: BenchRun): string {
  const checks = evaluateTargets(run);
  const mark = { met: 'met', missed: '**missed**', unclear: 'unclear (noise)', pending: 'pending' } as const;
  // The same targets checked against the before runs' suites; a target they did not measure shows nothing.
  const before = new Map(
    run.before === undefined
      ? []
      : evaluateTargets(run.before)
          .filter((c) => c.verdict !== 'pending')
          .map((c) => [c.target, `${c.figure}: ${mark[c.verdict]}`]),
  );
  const withBefore = run.before !== undefined;
  return (
    `${markdownTable(
      ['Target (issue)', 'This run (median)', 'Verdict', ...(withBefore ? ['Before'] : [])],
      checks.map((c) => [c.target, c.figure, mark[c.verdict], ...(withBefore ? [before.get(c.target) ?? ''] : [])]),
      ['l', 'l', 'l', 'l'],
    )}\n\n` +
    'HTTP targets are checked twice: by req/s (the target as written) and by the server\'s CPU per response (the same cost, undisturbed by other processes on a busy machine). "unclear" means the two disagree: re-run on a quiet machine.'
  );
}

function renderRules(rules: readonly DeclareResult[], run: BenchRun): string {
  const rows = rules.map((r) => [
    formatCount(r.count),
    formatCount(r.rules),
    `${r.declareUsPerRule.toFixed(2)} µs`,
    `${r.firstUseUsPerRule.toFixed(2)} µs`,
    `${r.relative.toFixed(2)}×`,
  ]);
  const worst = Math.max(...rules.map((r) => r.relative));
  return (
    `${markdownTable(['Resources declared', 'Rules', 'declareRules() per rule', 'First call per rule (compiles)', 'Cost per rule vs the smallest'], rows, ['r', 'r', 'r', 'r', 'r'])}\n\n` +
    `Each resource declares a flow rule and a circuit breaker (as a decorated method does), one \`declareRules()\` at a time on a fresh engine, then is called once. ` +
    `${plural(run.runs, 'fresh process', 'fresh processes')} per count, medians. Target: the cost per rule stays within 2× from 250 to 10,000 resources: ` +
    `${worst <= 2 ? 'met' : 'missed'} (${worst.toFixed(2)}×).`
  );
}

function renderCore(cases: CoreCaseResult[], run: BenchRun): string {
  const qps = cases.find((c) => c.id === 'fg.sync.qps');
  const withBefore = run.before?.core !== undefined;
  const rows = cases.map((c) => {
    const spread = c.samples.length === 0 ? '' : formatRange(c.samples, formatNs);
    const figure = c.pending !== undefined ? 'pending' : c.failed !== undefined ? 'failed' : formatNs(c.medianNs);
    const vs =
      qps && Number.isFinite(c.medianNs) && Number.isFinite(qps.medianNs) && c.owner !== 'baseline'
        ? `${(c.medianNs / qps.medianNs).toFixed(2)}×`
        : '';
    const before = beforeCase(run, c.id);
    return [
      c.owner,
      `${c.label}${c.async ? ' (async)' : ''}`,
      figure,
      ...(withBefore ? [before === undefined ? '' : formatNs(before.medianNs)] : []),
      spread,
      vs,
      c.pending ?? c.failed ?? '',
    ];
  });
  const note = run.coreSettings
    ? `\n\nSamples per case: ${plural(run.coreSettings.processes, 'process', 'processes')} × ${plural(run.coreSettings.passes, 'pass', 'passes')}` +
      `${run.before?.coreSettings === undefined ? '' : ` (before: ${plural(run.before.coreSettings.processes, 'process', 'processes')} × ${plural(run.before.coreSettings.passes, 'pass', 'passes')})`}. "× sync QPS" is the case's time over Floodgate's sync entry()+exit() with one QPS rule.`
    : '';
  const header = [
    'Library',
    'Case',
    'Per call',
    ...(withBefore ? ['Before'] : []),
    'Samples min – max',
    '× sync QPS',
    'Note',
  ];
  return `${markdownTable(header, rows, ['l', 'l', 'r', ...(withBefore ? (['r'] as const) : []), 'r', 'r', 'l'])}${note}`;
}

function renderMemory(subjects: MemorySubjectResult[]): string {
  const out: string[] = [];
  for (const m of subjects) {
    const name =
      m.subject === 'floodgate'
        ? `Floodgate hotspot rule (threshold 10/s, default capacity${m.capacity === undefined ? '' : ` ${m.capacity.toLocaleString('en-US')}`})`
        : 'rate-limiter-flexible RateLimiterMemory (10 points per 60 s)';
    if (m.pending !== undefined) {
      out.push(`**${name}**: pending — ${m.pending}`);
      continue;
    }
    const base = m.points[0] ? m.points[0].heapUsed + m.points[0].arrayBuffers : Number.NaN;
    const rows = m.points.map((p) => {
      const total = p.heapUsed + p.arrayBuffers;
      return [
        formatCount(p.values),
        formatMb(p.heapUsed),
        formatMb(p.arrayBuffers),
        formatMb(total),
        `+${formatMb(total - base)}`,
        p.values === 0 ? '' : `${Math.round((total - base) / p.values)} B`,
      ];
    });
    out.push(
      `**${name}**, ${formatNs(m.nsPerValue)} per new value\n\n${markdownTable(['Distinct values', 'heapUsed', 'arrayBuffers', 'Total', 'Growth', 'Per value'], rows)}`,
    );
    if (m.subject === 'floodgate')
      out.push(`Growth from capacity reached to the end: ${(heapGrowth(m) * 100).toFixed(1)} % (target: within 10 %).`);
  }
  return out.join('\n\n');
}

function renderHttp(frameworks: HttpFrameworkResult[], run: BenchRun): string {
  const out: string[] = [];
  const withBefore = run.before?.http !== undefined;
  for (const fw of frameworks) {
    const rows = fw.variants.map((v) => {
      const codes = [...new Set(v.rounds.flatMap((r) => Object.keys(r.statuses)))];
      const statuses = codes
        .map((code) => `${code}×${formatCount(sumOf(v.rounds, (r) => r.statuses[code] ?? 0))}`)
        .join(' ');
      const expected = Math.min(...v.rounds.map((r) => r.expectedShare));
      const busy = median(v.rounds.map((r) => r.serverBusy));
      const notes = [
        expected < 0.99 ? `**only ${(expected * 100).toFixed(1)} % expected statuses**` : '',
        busy < 0.9 ? `server busy ${(busy * 100).toFixed(0)} %` : '',
        v.rounds.some((r) => r.errors > 0) ? `${sumOf(v.rounds, (r) => r.errors)} errors` : '',
      ]
        .filter(Boolean)
        .join('; ');
      return [
        label(v.variant, fw.framework),
        formatCount(medianOf(v, (r) => r.rps)),
        v.variant === 'bare'
          ? '1.00'
          : `${formatRatio(median(v.rpsRatios))} (${formatRange(v.rpsRatios, formatRatio)})`,
        formatMs(medianOf(v, (r) => r.p50)),
        formatMs(medianOf(v, (r) => r.p99)),
        `${medianOf(v, (r) => r.cpuUsPerResponse).toFixed(1)} µs`,
        v.variant === 'bare' ? '1.00' : formatRatio(median(v.cpuRatios)),
        v.variant === 'bare' || v.variant === 'noop' ? '' : `${formatSigned(median(v.cpuOverNoopUs ?? []))} µs`,
        ...(withBefore ? [beforeOverNoop(run, fw.framework, v.variant)] : []),
        statuses,
        notes,
      ];
    });
    out.push(
      `### ${title(fw.framework)}\n\n${markdownTable(
        [
          'Variant',
          'req/s',
          'vs bare (rounds)',
          'p50',
          'p99',
          'Server CPU / response',
          'CPU vs bare',
          'CPU over noop',
          ...(withBefore ? ['Before'] : []),
          'Statuses, all rounds',
          'Notes',
        ],
        rows,
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', ...(withBefore ? (['r'] as const) : []), 'l', 'l'],
      )}`,
    );
  }
  out.push(
    "Variants: **bare** the route alone; **noop** one middleware (Fastify: one route `onRequest` hook) that does nothing, the framework's own price for any guard; **listener** one that only listens to the response's `close` (`res.on('close', fn)`), the least a guard that ends what it took when the request ends does; **floodgate** a QPS rule that never blocks + an errorRatio breaker + a per-user hotspot rule, through the adapter; " +
      "**peer** the framework's usual limiter at a limit never reached; **-blocked** every request refused with 429 (Floodgate: QPS threshold 0; the peers: a limit of 0). " +
      '"CPU over noop" is what the guard itself costs per response beyond the framework\'s middleware price (median over rounds of the difference within a round)' +
      `${withBefore ? `; "Before" is the same figure in the before runs (${plural(run.before?.httpSettings?.rounds ?? 0, 'round', 'rounds')}).` : '.'}`,
  );
  return out.join('\n\n');
}

/** A variant's CPU over noop in the before runs, or nothing when they lack it. */
function beforeOverNoop(run: BenchRun, framework: string, variant: string): string {
  const v = beforeVariant(run, framework, variant);
  if (v === undefined || variant === 'bare' || variant === 'noop') return '';
  const us = median(v.cpuOverNoopUs ?? []);
  return Number.isFinite(us) ? `${formatSigned(us)} µs` : '';
}

const GRPC_NAMES = {
  bare: 'bare grpc-js',
  noop: 'one pass-through interceptor',
  floodgate: 'Floodgate: QPS + breaker + hotspot',
} as const;

function renderGrpc(grpc: GrpcSuiteResult, run: BenchRun): string {
  const bareOf = (list: readonly GrpcVariantResult[]): GrpcVariantResult => list.find((v) => v.variant === 'bare')!;
  const rows = (list: readonly GrpcVariantResult[], cpu: 'serverCpuUsPerCall' | 'clientCpuUsPerCall'): string[][] =>
    list.map((v) => {
      const over = median(v.overBareUs);
      const bare = grpcMedian(bareOf(list), (r) => r[cpu]);
      return [
        GRPC_NAMES[v.variant],
        formatCount(grpcMedian(v, (r) => r.callsPerSec)),
        `${grpcMedian(v, (r) => r[cpu]).toFixed(2)} µs (${v.runs.map((r) => r[cpu].toFixed(2)).join(', ')})`,
        v.variant === 'bare'
          ? ''
          : `${over >= 0 ? '+' : ''}${over.toFixed(2)} µs (${((over / bare) * 100).toFixed(1)} %)`,
      ];
    });
  const s = run.grpcSettings;
  const how = s
    ? `Each figure: a fresh client process (pinned to core 1) starting ${formatCount(s.callsPerSec)} unary calls a second (open loop, the same rate for every variant) to a server process (pinned to core 0) for ${s.seconds} s, after one unrecorded second; ` +
      `${plural(s.rounds, 'round', 'interleaved rounds')} (reversed on odd rounds); callers cycle through 1,000 users (\`x-user-id\`), which the hotspot rule keys on; no rule refuses. ` +
      "CPU per call is the process's own CPU time (server: its threads' run time in /proc/<pid>/task/*/schedstat; client: `process.cpuUsage()`) over the calls it completed; the cost over bare is taken within a round, then the median over rounds."
    : '';
  const sides = (['server', 'client'] as const).map((side) => {
    const of = (variant: GrpcVariant): number => median(grpc.inProcess.map((run) => run[side][variant]));
    return (variant: GrpcVariant): string =>
      variant === 'bare'
        ? `${of('bare').toFixed(2)} µs`
        : `${of(variant).toFixed(2)} µs, +${(of(variant) - of('bare')).toFixed(2)} µs (${grpc.inProcess.map((run) => (run[side][variant] - run[side].bare).toFixed(2)).join(', ')})`;
  });
  const inProcess = markdownTable(
    ['In-process, no network', 'server CPU per call', 'client CPU per call'],
    GRPC_VARIANTS.map((variant) => [GRPC_NAMES[variant], sides[0]!(variant), sides[1]!(variant)]),
    ['l', 'r', 'r'],
  );
  const skipped = [...grpc.server, ...grpc.client].some((v) => v.runs.some((r) => r.skipped > 0))
    ? ' **Some runs skipped calls** (more in flight than the load allows): the rate was more than the pair could take, so the figures are not at the rate stated.'
    : '';
  return (
    `Server (each server loaded by a bare client):\n\n${markdownTable(['Server', 'calls/s', 'server CPU per call', 'over bare'], rows(grpc.server, 'serverCpuUsPerCall'), ['l', 'r', 'r', 'r'])}\n\n` +
    `Client (each client against the bare server):\n\n${markdownTable(['Client', 'calls/s', 'client CPU per call', 'over bare'], rows(grpc.client, 'clientCpuUsPerCall'), ['l', 'r', 'r', 'r'])}\n\n${how}${skipped}\n\n` +
    `The interceptors alone (bench/grpc/interceptor-cost.ts: each call through grpc-js's interceptor classes down to a stand-in transport that answers at once; median of 5 alternating batches, over ${plural(grpc.inProcess.length, 'fresh process', 'fresh processes')}, per-process differences in brackets):\n\n${inProcess}`
  );
}

function renderCluster(cluster: ClusterSuiteResult, run: BenchRun): string {
  const local = notPerCheck;
  const rows = cluster.cases.map((c) => [
    local(c) ? `${c.name} ‡` : c.name,
    formatCount(c.opsPerSec),
    c.runs.map((r) => formatCount(r.opsPerSec)).join(', '),
    formatMs(c.p50Ms),
    formatMs(c.p99Ms),
    formatMs(c.loadedP50Ms),
    formatMs(c.loadedP99Ms),
    c.runs.map((r) => (r.redisUsecPerCheck === undefined ? 'n/a' : r.redisUsecPerCheck.toFixed(2))).join(', '),
    c.runs.map((r) => (r.redisCpuUsecPerCheck === undefined ? 'n/a' : r.redisCpuUsecPerCheck.toFixed(2))).join(', '),
    c.runs.map((r) => (r.redisCallsPerCheck === undefined ? 'n/a' : r.redisCallsPerCheck.toFixed(3))).join(', '),
    c.runs.map((r) => formatCount(r.fallbacks ?? Number.NaN)).join(', '),
  ]);
  const settings = run.clusterSettings;
  const how = settings
    ? `bench/cluster-redis.ts's \`runClusterRedisBench\`, run in ${plural(settings.processes, 'fresh process', 'fresh processes')} (${settings.seconds} s per case and concurrency) on core 1, against ${cluster.redis} (on core 0); medians over processes. ` +
      "Every case admits every call; Floodgate's cases without leaseTokens are exact (each check decided in Redis; the checks of one rule made in one tick share one script call). " +
      'Redis µs and calls per check come from `INFO commandstats` over the loaded run (EVALSHA + EVAL, or PING, per check made), per process; Redis CPU µs per check from `INFO cpu` (used_cpu_user + used_cpu_sys over the loaded run, per check made): all the checks cost Redis, and steadier on a busy machine, where commandstats charges a script the time it was preempted.'
    : '';
  const note = cluster.cases.some(local)
    ? ' ‡ Not every check asks Redis (leased tokens, or checks that fell back to the local rule): not a comparison of exact limits.'
    : '';
  const fellBack = cluster.cases.some((c) => c.runs.some((r) => (r.fallbacks ?? 0) > 0))
    ? " Fallbacks are Floodgate checks that gave up on Redis after the backend's timeout and decided locally: a case with many is not a fair round-trip comparison."
    : '';
  return `${markdownTable(['Case', 'calls/s, 64 in flight', 'per process', 'p50 alone', 'p99 alone', 'p50, 64 in flight', 'p99, 64 in flight', 'Redis µs per check', 'Redis CPU µs per check', 'Redis calls per check', 'Fallbacks per process'], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])}\n\n${how}${note}${fellBack}`;
}

/** A cluster case whose checks do not all ask Redis (leased tokens, or fallbacks): not exact. */
function notPerCheck(c: { name: string; runs: readonly { fallbacks?: number }[] }): boolean {
  return c.name.includes('leaseTokens') || c.runs.some((r) => (r.fallbacks ?? 0) > 0);
}

function renderOverload(overload: OverloadSuiteResult, run: BenchRun): string {
  const s = run.overloadSettings;
  const NAMES = {
    none: 'unguarded',
    system: 'system rule `{ maxEventLoopUtilization: 0.8 }`',
    adaptive: "adaptive concurrency `{ metric: 'concurrency', behavior: 'adaptive', threshold: 10 }`",
  } as const;
  const rows = overload.variants.map((v) => [
    NAMES[v.variant],
    formatMs(overloadMedian(v, (r) => r.p99Ms)),
    formatMs(overloadMedian(v, (r) => r.p50Ms)),
    `${formatCount(overloadMedian(v, (r) => r.goodput))} req/s`,
    formatRatio(overloadMedian(v, (r) => goodputRatio(r, overload))),
    formatRange(
      v.runs.map((r) => r.p99Ms),
      formatMs,
    ),
    formatRange(
      v.runs.map((r) => r.goodput),
      formatCount,
    ),
    `200×${formatCount(sumOf(v.runs, (r) => r.statuses['200'] ?? 0))} 503×${formatCount(sumOf(v.runs, (r) => r.statuses['503'] ?? 0))} gave up ${formatCount(sumOf(v.runs, (r) => r.timedOut + r.failed))}`,
  ]);
  const how = s
    ? `${capacityMethod(overload)}; load ${formatCount(overload.rate)} req/s (${s.overload}×), open loop, ${s.seconds} s per run from the orchestrator on core 1, ` +
      `after 1 s at half the capacity; each run in a fresh server on core 0; clients give up after ${s.deadlineMs} ms; ${plural(s.rounds, 'round', 'interleaved rounds')}; medians over rounds. ` +
      `${routeWork(overload)} Goodput: ${goodputMethod(overload)}; latencies are those of the 200s.`
    : '';
  return `${markdownTable(['Guard', 'p99', 'p50', 'goodput', 'goodput / capacity', 'p99, rounds', 'goodput, rounds', 'Answers, all rounds'], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'])}\n\n${how}${renderMixed(overload, run)}`;
}

/** What the route does per request: timed busy steps since `work: 'timed'`, a calibrated count of iterations before. */
function routeWork(overload: OverloadSuiteResult): string {
  return overload.work === 'timed'
    ? `The route keeps the event loop busy for ${overload.workMs} ms of the clock per request, in 5 steps, awaiting between them (timed, not a count of iterations, whose time V8's re-optimisation of the handler changed part-way through a server).`
    : `The route does about ${overload.workMs} ms of CPU per request in 5 steps, awaiting between them.`;
}

/**
 * What the capacity is: measured in every round since rounds carry their baseline (each run's
 * ratios then taken against its own round's), once per run before.
 */
function capacityMethod(overload: OverloadSuiteResult): string {
  const what = '200s per second of the unguarded server with 4 requests in flight';
  const rounds = roundBaselines(overload)?.map((b) => b.capacity);
  if (rounds === undefined)
    return `Capacity ${formatCount(overload.capacity)} req/s (${what}, measured once before the rounds)`;
  const measured = `Capacity ${formatCount(overload.capacity)} req/s${rounds.length > 1 ? `, the median of its rounds' (${formatRange(rounds, formatCount)})` : ''} (${what}, measured in a fresh server at the start of each round`;
  return ownCapacities(overload)
    ? `${measured}: the loads are multiples of it); each run's goodput / capacity is over the capacity of its own server, the same work on a path past every guard at 4 in flight, measured just before the run and just after it (the mean of the two), so a drift of the machine's speed moves both`
    : `${measured}; each run's goodput / capacity is over its own round's)`;
}

/**
 * How a run's goodput was counted: runs saved before the overload suite counted the 200s while
 * the load was offered (they have no `okWhileSending`) counted them over the whole run.
 */
function goodputMethod(overload: OverloadSuiteResult): string {
  const counted = overload.variants.some((v) => v.runs.some((r) => r.okWhileSending !== undefined));
  return counted
    ? '200s answered (within the deadline) per second while the load was offered (those answered while requests were still being sent, over the time they were sent; the drain after the last request is in neither)'
    : '200s answered (within the deadline) per second';
}

/** Mixed traffic (20 % critical, 80 % sheddable) at each load, by guard. */
function renderMixed(overload: OverloadSuiteResult, run: BenchRun): string {
  const mixed = overload.mixed;
  const unloaded = overload.unloadedP99Ms;
  if (mixed === undefined || mixed.length === 0 || unloaded === undefined) return '';
  const NAMES = {
    none: 'unguarded',
    blind: 'adaptive concurrency, priority-blind',
    priority: 'adaptive concurrency reading `x-priority`, `priorityFactors: { sheddable: 0.5, critical: 2 }`',
    partitioned: 'concurrency 6, `partitions: { critical: 0.7, sheddable: 0.3 }`, reading `x-priority`',
    queued: 'concurrency 1, a queue of 10 served by priority (`prioritized`), reading `x-priority`',
  } as const;
  const med = (runs: readonly MixedRun[], pick: (r: MixedRun) => number): number => median(runs.map(pick));
  // Rounds measured before ceilings were have none: their table is as it was.
  const ceiled = mixed.some((m) => m.runs.some((r) => r.baseline?.ceilings !== undefined));
  const rows = mixed.map((m) => [
    `${m.load}×`,
    NAMES[m.variant],
    `${(med(m.runs, (r) => r.criticalSuccess) * 100).toFixed(2)} %`,
    formatRatio(med(m.runs, (r) => goodputRatio(r, overload))),
    ...(ceiled ? [formatRatio(med(m.runs, (r) => ceilingRatio(r, overload, m.load)))] : []),
    formatMs(med(m.runs, (r) => r.criticalP99Ms)),
    formatRatio(med(m.runs, (r) => criticalP99Ratio(r, overload))),
    `${formatRange(
      m.runs.map((r) => r.criticalSuccess * 100),
      (n) => `${n.toFixed(1)} %`,
    )} / ${formatRange(
      m.runs.map((r) => goodputRatio(r, overload)),
      formatRatio,
    )}`,
  ]);
  const s = run.overloadSettings;
  const baselines = roundBaselines(overload);
  return (
    `\n\n### Mixed traffic: 20 % critical, 80 % sheddable\n\n` +
    markdownTable(
      [
        'Load',
        'Guard',
        'critical 200s',
        'goodput / capacity',
        ...(ceiled ? ['goodput / ceiling'] : []),
        'critical p99',
        'critical p99 / unloaded p99',
        'critical 200s / goodput, rounds',
      ],
      rows,
      ['r', 'l', 'r', 'r', ...(ceiled ? ['r' as const] : []), 'r', 'r', 'l'],
    ) +
    `\n\nEvery fifth request carries \`x-priority: critical\`, the rest \`sheddable\`, open loop at each load × capacity for ${s?.seconds ?? '?'} s per run, in a fresh server per run, interleaved rounds, medians over rounds. ` +
    `Critical 200s: critical requests answered 200 within the ${s?.deadlineMs ?? '?'} ms deadline / critical requests sent. Unloaded p99: the unguarded route, one request at a time, ${formatMs(unloaded)}${
      baselines === undefined || baselines.length < 2
        ? ''
        : ` (the median of one per round, ${formatRange(
            baselines.map((b) => b.unloadedP99Ms),
            formatMs,
          )}: each run's ratio is over its own round's)`
    }.${ceiled ? ` ${ceilingMethod(overload)}` : ''}`
  );
}

/**
 * What the ceiling is, and its median by load: the goodput the refusals of a guard that costs
 * nothing leave the route, measured at the start of each round.
 */
function ceilingMethod(overload: OverloadSuiteResult): string {
  const baselines = roundBaselines(overload) ?? [];
  const loads = [...new Set(baselines.flatMap((b) => (b.ceilings ?? []).map((c) => c.load)))];
  const at = loads.map((load) => {
    const ratios = baselines.flatMap((b) => (b.ceilings ?? []).filter((c) => c.load === load).map((c) => c.ratio));
    return `${formatRatio(median(ratios))} at ${load}× (${formatRange(ratios, formatRatio)})`;
  });
  return (
    `Ceiling: the share of the capacity a guard that costs nothing to decide would leave, ${at.join('; ')}. ` +
    `It is measured in each round's unguarded server: 200s per second at 4 in flight while requests to a path answered 503 before any middleware arrive at (load − 1) × capacity (the refusals of a guard serving the capacity), over 200s per second alone, in ${CEILING_PAIRS} alternating pairs of ${CEILING_PHASE_REQUESTS} requests, the median of the pairs. ` +
    "Goodput / ceiling is each run's goodput / capacity over its own round's ceiling."
  );
}

function label(variant: string, framework: string): string {
  return variant.replace('peer', PEER_OF[framework] ?? 'peer');
}

function renderOutbound(outbound: OutboundSuiteResult, run: BenchRun): string {
  const bare = (id: string): number =>
    outbound.cases.find((c) => c.id === (id.startsWith('request') ? 'request.bare' : 'fetch.bare'))!.cpuUsPerCall;
  const rows = outbound.cases.map((c) => [
    c.name,
    `${c.cpuUsPerCall.toFixed(2)} µs`,
    c.id.endsWith('.bare') ? '' : `${formatSigned(Number((c.cpuUsPerCall - bare(c.id)).toFixed(2)))} µs`,
    formatRange(c.samples, (n) => n.toFixed(1)),
  ]);
  const s = run.outboundSettings;
  const a = outbound.amplification;
  const method =
    s === undefined
      ? ''
      : `bench/outbound: ${plural(s.processes, 'fresh process', 'fresh processes')} on core 1, each ${plural(s.rounds, 'round', 'rounds')} of ${s.calls.toLocaleString('en-US')} calls per case (16 in flight, every case warmed first, interleaved, reversed on odd rounds), against a local \`node:http\` server in its own process on core 0; CPU per call is the caller process's \`process.cpuUsage()\` (user + system) over the calls, median over every round. ` +
        'The guard: a circuit breaker, retries (2) within the retry budget, a 5 s timeout and pushback on the host; cockatiel: `wrap(retry(2), circuitBreaker, timeout(5 s))` around the same bare `fetch()`. ';
  return [
    markdownTable(['calls', 'CPU per call', 'over bare', 'range (µs)'], rows, ['l', 'r', 'r', 'r']),
    '',
    `Load amplification of a failing upstream (every answer 503, ${a.calls.toLocaleString('en-US')} calls, 16 in flight, retries on): ` +
      `**${a.floodgate.toFixed(3)}** requests per call through Floodgate (2 retries at most, within the default retry budget: 20 % of first attempts plus 10 a second), ` +
      `${a.cockatiel.toFixed(3)} through cockatiel's \`retry(handleAll, { maxAttempts: 2 })\`.`,
    '',
    method,
  ].join('\n');
}
