import type { ClusterCaseResult } from '../cluster/cluster-suite';
import type { HttpFrameworkResult, HttpVariantResult } from '../http/http-suite';
import { formatCount, formatMb, formatMs, formatNs, formatRatio, formatSigned, plural, title } from '../lib/format';
import { ALL_SUITES } from '../lib/bench-options';
import { markdownTable } from '../lib/markdown-table';
import { median, sumOf } from '../lib/median';
import type { MemorySubjectResult } from '../memory/memory-suite';
import { goodputRatio, overloadMedian, ownCapacities, roundBaselines } from '../overload/overload-suite';
import { beforeCase, beforeVariant, combinedSuites, pooledSuites, type RunOrigin } from './combine-runs';
import { heapGrowth } from './evaluate-targets';
import type { BenchRun } from './render-report';

/**
 * The lines around the summary, in bench/results/latest.md and in the README's Performance
 * section, which quotes it: `npm run bench` rewrites what lies between them in both, and a test
 * checks that the two agree.
 */
export const SUMMARY_START = '<!-- bench summary: written by npm run bench from bench/results/latest.json -->';
export const SUMMARY_END = '<!-- end of bench summary -->';

/** The peer limiter of each framework in the HTTP suite. */
export const PEER_OF: Readonly<Record<string, string>> = {
  express: 'express-rate-limit',
  koa: 'koa-ratelimit',
  fastify: '@fastify/rate-limit',
};

/**
 * The result of a run in a minute: one table of headline figures beside the peers, the overload
 * table, and what "passing" and "all blocked" mean, between {@link SUMMARY_START} and
 * {@link SUMMARY_END}. Rows of suites the run did not measure are left out.
 */
export function renderSummary(run: BenchRun): string {
  const m = run.machine;
  const date = run.startedAt.toISOString().slice(0, 10);
  const full = ['core', 'rules', 'memory', 'http', 'cluster', 'overload'].every(
    (suite) => (run as unknown as Record<string, unknown>)[suite] !== undefined,
  );
  const lead =
    `${full ? 'One full run of `npm run bench`' : `One run of \`${run.command}\``} on ${date}${laterRuns(run)}: ${m.cpu}, ${m.cores} cores, Node ${m.node}; ` +
    `every figure side by side with the peers in the same run, the median of ${medianOf(run)}. ` +
    `${beforeLead(run)}Method, machine load and every table: \`bench/results/latest.md\`.`;
  const parts = [SUMMARY_START, '', lead, '', renderHeadlines(run)];
  if (run.overload) parts.push('', renderOverloadSummary(run));
  const notes = renderNotes(run);
  if (notes !== '') parts.push('', notes);
  parts.push('', SUMMARY_END);
  return parts.join('\n');
}

/**
 * What later runs did to the run's suites, with their dates (empty without any): the first line
 * names the run whose figures the summary holds, and a suite measured again is not that run's.
 */
function laterRuns(run: BenchRun): string {
  const dates = (origins: readonly RunOrigin[]): string =>
    [...new Set(origins.map((o) => o.startedAt.slice(0, 10)))].join(' and ');
  const again = run.remeasured;
  const added = run.appended;
  return (
    `${again === undefined ? '' : `, its ${combinedSuites(again)} figures measured again on ${dates(again)}`}` +
    `${added === undefined ? '' : `, with the ${combinedSuites(added)} measurements of later runs on ${dates(added)} added to its own`}`
  );
}

/** How many processes or rounds the figures are medians of (per suite once runs were appended). */
function medianOf(run: BenchRun): string {
  const all = plural(run.runs, 'process or round', 'processes or interleaved rounds');
  const counts = pooledSuites(run).map(({ suite, samples }) =>
    suite === 'core'
      ? `${plural(samples, 'process', 'processes')} (core)`
      : `${plural(samples, 'round', 'rounds')} (${suite === 'http' ? 'HTTP' : suite})`,
  );
  if (counts.length === 0) return all;
  const runs = 1 + (run.appended?.length ?? 0) + (run.remeasured?.length ?? 0);
  return `${counts.join(', ')} over ${plural(runs, 'run', 'runs')}${suitesOf(run).length > counts.length ? `, ${all} elsewhere` : ''}`;
}

function suitesOf(run: BenchRun): string[] {
  return ALL_SUITES.filter((suite) => run[suite] !== undefined);
}

/** Where the "before" figures come from, in a sentence (empty without them). */
function beforeLead(run: BenchRun): string {
  const before = run.before;
  if (before === undefined) return '';
  const commits = [...new Set(before.runs.map((r) => r.commit ?? 'an unrecorded commit'))].map((c) => `\`${c}\``);
  const dates = [...new Set(before.runs.map((r) => r.startedAt.slice(0, 10)))];
  return `"before": the same case measured on this machine on ${commits.join(', ')} (${dates.join(', ')}). `;
}

function renderHeadlines(run: BenchRun): string {
  const rows: string[][] = [];
  const core = new Map((run.core ?? []).map((c) => [c.id, c]));
  /** A figure, with the before runs' figure of the same case beside it when they have one. */
  const withBefore = (figure: string, before: string | undefined): string =>
    before === undefined || figure === 'n/a' ? figure : `${figure} (before ${before})`;
  const ns = (id: string): string => {
    const c = core.get(id);
    const b = beforeCase(run, id);
    return c === undefined || !Number.isFinite(c.medianNs)
      ? 'n/a'
      : withBefore(formatNs(c.medianNs), b && formatNs(b.medianNs));
  };
  const ratio = (a: string, b: string, digits: number): string => {
    const x = core.get(a);
    const y = core.get(b);
    const bx = beforeCase(run, a);
    const by = beforeCase(run, b);
    return x === undefined || y === undefined
      ? 'n/a'
      : withBefore(
          `${(x.medianNs / y.medianNs).toFixed(digits)}×`,
          bx && by && `${(bx.medianNs / by.medianNs).toFixed(digits)}×`,
        );
  };
  // Peers' figures stay this run's alone: the before runs are about Floodgate's code.
  const peer = (id: string): string => {
    const c = core.get(id);
    return c === undefined || !Number.isFinite(c.medianNs) ? 'n/a' : formatNs(c.medianNs);
  };
  if (run.core) {
    rows.push(['sync `entry()+exit()`, one QPS rule', ns('fg.sync.qps'), '']);
    rows.push(['sync `entry()+exit()`, QPS + breaker + hotspot', ns('fg.sync.three'), '(no peer does all three)']);
    rows.push([
      'async pass, one rule (`await run()`)',
      ns('fg.async.qps'),
      `rate-limiter-flexible ${peer('rlf.pass')}, cockatiel ${peer('cockatiel.pass')}, opossum ${peer('opossum.pass')}`,
    ]);
    rows.push([
      'blocked call',
      `${ns('fg.block.tryEntry')} (\`tryEntry\`), ${ns('fg.block.thrown')} (thrown)`,
      `rate-limiter-flexible ${peer('rlf.reject')}, cockatiel ${peer('cockatiel.open')}, opossum ${peer('opossum.open')} (open circuit)`,
    ]);
    if (core.has('fg.sync.qpsSystem'))
      rows.push([
        'an inbound `entry()+exit()` with a system rule (every limit) over without',
        ratio('fg.sync.qpsSystem', 'fg.sync.qpsInbound', 2),
        '',
      ]);
    if (core.has('fg.metrics.on'))
      rows.push([
        '`entry()+exit()` with the Prometheus exporter attached, over without',
        ratio('fg.metrics.on', 'fg.metrics.off', 3),
        '(no Node limiter exports metrics)',
      ]);
    const scrape = core.get('prom.scrape1000');
    if (scrape)
      rows.push(['Prometheus scrape of 1,000 resources (rule + breaker each)', formatMs(scrape.medianNs / 1e6), '']);
  }
  const rules = run.rules;
  if (rules && rules.length > 1) {
    const first = rules[0]!;
    const last = rules[rules.length - 1]!;
    rows.push([
      `declaring rules one by one, cost per rule at ${formatCount(last.count)} resources vs ${formatCount(first.count)}`,
      `${last.relative.toFixed(2)}×`,
      '',
    ]);
  }
  const memory = memoryRow(run.memory);
  if (memory) rows.push(memory);
  if (run.http && run.http.length > 0) rows.push(...httpRows(run.http, run));
  const cluster = clusterRow(run.cluster?.cases ?? []);
  if (cluster) rows.push(cluster);
  return markdownTable(['measure', 'Floodgate', 'peers'], rows, ['l', 'l', 'l']);
}

function memoryRow(memory: readonly MemorySubjectResult[] | undefined): string[] | undefined {
  const hot = memory?.find((m) => m.subject === 'floodgate');
  const rlf = memory?.find((m) => m.subject === 'rlf');
  if (hot === undefined || rlf === undefined || hot.pending !== undefined) return undefined;
  const total = (m: MemorySubjectResult, i: number): number => m.points[i]!.heapUsed + m.points[i]!.arrayBuffers;
  const growth = (m: MemorySubjectResult): number => total(m, m.points.length - 1) - total(m, 0);
  const n = rlf.points[rlf.points.length - 1]?.values ?? 0;
  return [
    `heap after ${formatCount(n)} distinct keys`,
    `+${formatMb(growth(hot))}, flat from capacity (${signedPercent(heapGrowth(hot))})`,
    `rate-limiter-flexible +${formatMb(growth(rlf))} (${Math.round(growth(rlf) / n)} B per key)`,
  ];
}

function httpRows(frameworks: readonly HttpFrameworkResult[], run: BenchRun): string[][] {
  const of = (fw: HttpFrameworkResult, name: string): HttpVariantResult | undefined =>
    fw.variants.find((v) => v.variant === name);
  const cpu = (v: HttpVariantResult | undefined): string => formatSigned(median(v?.cpuOverNoopUs ?? []));
  const rps = (v: HttpVariantResult | undefined): string => formatRatio(median(v?.rpsRatios ?? []));
  const each = (pick: (fw: HttpFrameworkResult) => string): string => frameworks.map(pick).join(', ');
  /** Floodgate's passing / blocked CPU over noop on a framework, the before runs' beside it when they have both. */
  const fgCpu = (fw: HttpFrameworkResult): string => {
    const now = `${cpu(of(fw, 'floodgate'))} / ${cpu(of(fw, 'floodgate-blocked'))}`;
    const pass = beforeVariant(run, fw.framework, 'floodgate');
    const blocked = beforeVariant(run, fw.framework, 'floodgate-blocked');
    return pass === undefined || blocked === undefined ? now : `${now} (before ${cpu(pass)} / ${cpu(blocked)})`;
  };
  return [
    [
      'server CPU per request over a no-op middleware, passing / all blocked (429)',
      `${each((fw) => `${title(fw.framework)} ${fgCpu(fw)}`)} µs`,
      `${each((fw) => `${PEER_OF[fw.framework]} ${cpu(of(fw, 'peer'))} / ${cpu(of(fw, 'peer-blocked'))}`)} µs`,
    ],
    [
      'req/s vs bare, passing / all blocked',
      each((fw) => `${title(fw.framework)} ${rps(of(fw, 'floodgate'))} / ${rps(of(fw, 'floodgate-blocked'))}`),
      each((fw) => `${PEER_OF[fw.framework]} ${rps(of(fw, 'peer'))} / ${rps(of(fw, 'peer-blocked'))}`),
    ],
  ];
}

function clusterRow(cases: readonly ClusterCaseResult[]): string[] | undefined {
  const find = (prefix: string): ClusterCaseResult | undefined => cases.find((c) => c.name.startsWith(prefix));
  const fgOne = find('floodgate cluster flow rule (global window)');
  const fgMany = find('floodgate cluster hotspot rule');
  const rlfOne = find('rate-limiter-flexible RateLimiterRedis, one key');
  const rlfMany = find('rate-limiter-flexible RateLimiterRedis, 1000 keys');
  if (fgOne === undefined || fgMany === undefined || rlfOne === undefined || rlfMany === undefined) return undefined;
  const redisCpu = (c: ClusterCaseResult): string => {
    const us = median(c.runs.map((r) => r.redisCpuUsecPerCheck ?? Number.NaN));
    return Number.isFinite(us) ? us.toFixed(1) : 'n/a';
  };
  const times = (a: ClusterCaseResult, b: ClusterCaseResult): string => `${(a.opsPerSec / b.opsPerSec).toFixed(2)}×`;
  return [
    'cluster check over Redis, 64 in flight, one key / 1,000 keys',
    `${formatCount(fgOne.opsPerSec)} / ${formatCount(fgMany.opsPerSec)} calls/s (${times(fgOne, rlfOne)} / ${times(fgMany, rlfMany)} RateLimiterRedis); ` +
      `Redis CPU per check ${redisCpu(fgOne)} / ${redisCpu(fgMany)} µs`,
    `RateLimiterRedis ${formatCount(rlfOne.opsPerSec)} / ${formatCount(rlfMany.opsPerSec)} calls/s; ` +
      `${redisCpu(rlfOne)} / ${redisCpu(rlfMany)} µs of Redis CPU per check`,
  ];
}

function renderOverloadSummary(run: BenchRun): string {
  const overload = run.overload!;
  const deadline = run.overloadSettings?.deadlineMs;
  const NAMES = {
    none: 'unguarded',
    system: 'system rule `{ maxEventLoopUtilization: 0.8 }`',
    adaptive: "adaptive concurrency (`behavior: 'adaptive'`)",
  } as const;
  const rows = overload.variants.map((v) => {
    const gaveUp = formatCount(sumOf(v.runs, (r) => r.timedOut + r.failed));
    const refused = formatCount(sumOf(v.runs, (r) => r.statuses['503'] ?? 0));
    return [
      NAMES[v.variant],
      formatMs(overloadMedian(v, (r) => r.p99Ms)),
      formatRatio(overloadMedian(v, (r) => goodputRatio(r, overload))),
      v.runs.some((r) => (r.statuses['503'] ?? 0) > 0) ? `${gaveUp} (${refused} answered 503)` : gaveUp,
    ];
  });
  const intro =
    `Overload: a CPU-bound Express route (${overload.work === 'timed' ? `${overload.workMs} ms of the event loop, timed,` : `about ${overload.workMs} ms of CPU`} per request) driven open loop at ` +
    `${formatRatio(overload.rate / overload.capacity)}× its measured capacity of ${formatCount(overload.capacity)} req/s${roundBaselines(overload) === undefined ? '' : ' (the median of its rounds, each measuring its own)'}` +
    `${deadline === undefined ? '' : `, clients giving up after ${deadline >= 1000 ? `${deadline / 1000} s` : formatMs(deadline)}`}` +
    `${ownCapacities(overload) ? "; goodput over the capacity each run's own server measured just before and after it" : ''}:`;
  return `${intro}\n\n${markdownTable(['guard', 'p99 of the 200s', 'goodput / capacity', `clients that gave up (${plural(overload.variants[0]?.runs.length ?? 0, 'round', 'rounds')}, in all)`], rows, ['l', 'r', 'r', 'r'])}`;
}

/** What the HTTP variants mean, with the run's own baselines (a listener's price, a bare request's CPU). */
function renderNotes(run: BenchRun): string {
  if (!run.http || run.http.length === 0) return '';
  const of = (fw: HttpFrameworkResult, name: string): HttpVariantResult | undefined =>
    fw.variants.find((v) => v.variant === name);
  const listeners = run.http.filter((fw) => of(fw, 'listener') !== undefined);
  const listener = listeners
    .map((fw) => `${formatSigned(median(of(fw, 'listener')!.cpuOverNoopUs))} µs on ${title(fw.framework)}`)
    .join(', ');
  const bare = run.http
    .map((fw, i) => {
      const v = of(fw, 'bare');
      const us = v === undefined ? 'n/a' : median(v.rounds.map((r) => r.cpuUsPerResponse)).toFixed(0);
      return `${us} µs${i === 0 ? ' of server CPU' : ''} on ${title(fw.framework)}`;
    })
    .join(', ');
  const cost =
    listeners.length === 0
      ? `A bare request costs about ${bare}`
      : `A middleware that only listens to the response's \`close\` (the least a guard that ends what it took when the request ends does) costs ${listener}; a bare request costs about ${bare}`;
  return (
    '"Passing" guards the route with a QPS rule that never blocks, a breaker and a per-user hotspot rule; ' +
    '"all blocked" answers every request with a 429 (four or five headers and a problem+json body, several times the bytes of the bare route\'s 200). ' +
    `${cost}, so the same few microseconds weigh differently.`
  );
}

function signedPercent(fraction: number): string {
  return Number.isFinite(fraction) ? `${fraction >= 0 ? '+' : '−'}${Math.abs(fraction * 100).toFixed(1)} %` : 'n/a';
}
