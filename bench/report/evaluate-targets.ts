import type { ClusterSuiteResult } from '../cluster/cluster-suite';
import type { CoreCaseResult } from '../core/core-suite';
import { grpcMedian, type GrpcSuiteResult } from '../grpc/grpc-suite';
import type { HttpFrameworkResult, HttpVariantResult } from '../http/http-suite';
import { median } from '../lib/median';
import { formatNs, formatRange, formatRatio } from '../lib/format';
import type { MemorySubjectResult } from '../memory/memory-suite';
import type { OutboundSuiteResult } from '../outbound/outbound-suite';

/** One of the benchmark targets (issues #7 and #14), checked against this run. */
export interface TargetCheck {
  readonly target: string;
  /** The figure, in words (`0.97 (0.96, 0.98)`). */
  readonly figure: string;
  /**
   * `met`, `missed`, `unclear` (HTTP: the req/s ratio and the server-CPU cross-check disagree,
   * so the machine's noise decided), or `pending` (the suite did not run, or a feature is missing).
   */
  readonly verdict: 'met' | 'missed' | 'unclear' | 'pending';
}

/** Everything a report is made of. */
export interface SuiteResults {
  readonly core?: CoreCaseResult[];
  readonly memory?: MemorySubjectResult[];
  readonly http?: HttpFrameworkResult[];
  readonly grpc?: GrpcSuiteResult;
  readonly cluster?: ClusterSuiteResult;
  readonly outbound?: OutboundSuiteResult;
}

/** Checks every target (issues #7 and #14) that this run measured. */
export function evaluateTargets(results: SuiteResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const core = new Map((results.core ?? []).map((c) => [c.id, c]));
  const finite = (c: CoreCaseResult | undefined): c is CoreCaseResult => c !== undefined && Number.isFinite(c.medianNs);
  const ns = (id: string, limitNs: number, target: string): void => {
    const c = core.get(id);
    if (c === undefined || c.pending !== undefined || c.failed !== undefined || !Number.isFinite(c.medianNs)) {
      checks.push({ target, figure: c?.pending ?? c?.failed ?? 'not run', verdict: 'pending' });
      return;
    }
    checks.push({
      target,
      figure: `${formatNs(c.medianNs)} (${formatRange(c.samples, formatNs)})`,
      verdict: c.medianNs <= limitNs ? 'met' : 'missed',
    });
  };
  ns('fg.sync.qps', 120, 'sync entry()+exit() with one QPS rule <= 120 ns (#30)');
  ns('fg.sync.three', 180, 'sync entry()+exit() with QPS + breaker + hotspot <= 180 ns (#30)');
  ns('fg.block.tryEntry', 90, 'blocked tryEntry() <= 90 ns (#30)');
  checks.push(
    timesTarget(
      core.get('fg.sync.qpsShadow'),
      core.get('fg.sync.qps'),
      'entry()+exit() with one QPS rule in shadow <= 1.1× the same rule enforced, on calls it passes (#28)',
      (times) => times <= 1.1,
    ),
    timesTarget(
      core.get('fg.async.decorated'),
      core.get('fg.async.qpsAsyncFn'),
      'a @RateLimit async method <= 1.1× await run() of the same async function (#30)',
      (times) => times <= 1.1,
    ),
  );
  checks.push(
    timesTarget(
      core.get('fg.sync.qpsInboundCopy'),
      core.get('fg.sync.qpsInboundNoSystemKind'),
      'an inbound call with no system rule <= 1.05× the same call with the system kind compiled out (#30)',
      (times) => times <= 1.05,
    ),
  );
  for (const peer of ['cockatiel.pass', 'rlf.pass'] as const) {
    checks.push(
      timesTarget(
        core.get('fg.async.qps'),
        core.get(peer),
        `await run() with one QPS rule faster than ${peer} (#30)`,
        (times) => times < 1,
      ),
    );
  }

  const off = core.get('fg.metrics.off');
  const on = core.get('fg.metrics.on');
  const exporterTarget = 'entry()+exit() with the Prometheus exporter attached <= 1.05× without (#15)';
  if (off === undefined || on === undefined || !Number.isFinite(off.medianNs) || !Number.isFinite(on.medianNs)) {
    checks.push({ target: exporterTarget, figure: 'not run', verdict: 'pending' });
  } else {
    const ratio = on.medianNs / off.medianNs;
    checks.push({
      target: exporterTarget,
      figure: `${ratio.toFixed(3)}× (${formatNs(on.medianNs)} vs ${formatNs(off.medianNs)})`,
      verdict: ratio <= 1.05 ? 'met' : 'missed',
    });
  }

  const qps = core.get('fg.sync.qps');
  const inbound = core.get('fg.sync.qpsInbound');
  const system = core.get('fg.sync.qpsSystem');
  const systemTarget =
    'the system check on the entry path: inbound entry()+exit() with one QPS rule + a system rule <= 1.3× without the system rule';
  if (!finite(inbound) || !finite(system)) {
    checks.push({ target: systemTarget, figure: system?.failed ?? inbound?.failed ?? 'not run', verdict: 'pending' });
  } else {
    const times = system.medianNs / inbound.medianNs;
    const outbound = finite(qps)
      ? `; ${(system.medianNs / qps.medianNs).toFixed(2)}× an outbound call with one QPS rule (${formatNs(qps.medianNs)})`
      : '';
    checks.push({
      target: systemTarget,
      figure: `${times.toFixed(2)}× (${formatNs(system.medianNs)} vs ${formatNs(inbound.medianNs)})${outbound}`,
      verdict: times <= 1.3 ? 'met' : 'missed',
    });
  }

  const fgPass = qps;
  for (const peer of ['rlf.pass', 'cockatiel.pass', 'opossum.pass'] as const) {
    const p = core.get(peer);
    const target = `sync one-QPS-rule pass several times (>= 3×) under ${peer}`;
    if (fgPass === undefined || p === undefined || !Number.isFinite(fgPass.medianNs) || !Number.isFinite(p.medianNs)) {
      checks.push({ target, figure: 'not run', verdict: 'pending' });
      continue;
    }
    const times = p.medianNs / fgPass.medianNs;
    checks.push({
      target,
      figure: `${times.toFixed(1)}× (${formatNs(p.medianNs)} vs ${formatNs(fgPass.medianNs)})`,
      verdict: times >= 3 ? 'met' : 'missed',
    });
  }

  const hot = results.memory?.find((m) => m.subject === 'floodgate');
  const heapTarget = 'heap flat (within 10 %) from hotspot capacity reached to the last value';
  if (hot === undefined || hot.pending !== undefined || hot.capacity === undefined) {
    checks.push({ target: heapTarget, figure: hot?.pending ?? 'not run', verdict: 'pending' });
  } else {
    const growth = heapGrowth(hot);
    checks.push({
      target: heapTarget,
      figure: `${(growth * 100).toFixed(1)} % from ${hot.capacity.toLocaleString('en-US')} to ${hot.points[hot.points.length - 1]!.values.toLocaleString('en-US')} values`,
      verdict: Math.abs(growth) <= 0.1 ? 'met' : 'missed',
    });
  }

  for (const fw of results.http ?? []) {
    const variant = (name: string): HttpVariantResult | undefined => fw.variants.find((v) => v.variant === name);
    ratioCheck(
      checks,
      variant('floodgate'),
      0.95,
      `${fw.framework}: >= 0.95 of bare throughput with QPS + breaker + hotspot`,
    );
    ratioCheck(
      checks,
      variant('floodgate-blocked'),
      1.0,
      `${fw.framework}: blocked (429) at least as fast as bare answers its route`,
    );
    for (const [name, what] of [
      ['floodgate', 'passing'],
      ['floodgate-blocked', 'all blocked'],
    ] as const) {
      const over = median(variant(name)?.cpuOverNoopUs ?? []);
      checks.push({
        target: `${fw.framework}: ${what}, server CPU per response <= +2 µs over the no-op middleware (#30)`,
        figure: Number.isFinite(over) ? `${over >= 0 ? '+' : ''}${over.toFixed(2)} µs` : 'not run',
        verdict: !Number.isFinite(over) ? 'pending' : over <= 2 ? 'met' : 'missed',
      });
    }
  }
  // Only when the suite ran: a saved run from before it renders as it did. The cost is the
  // interceptor's own, measured in-process (the end-to-end runs' differences are noise on a busy
  // machine); the share is of the bare server's CPU per call end to end.
  const grpc = results.grpc;
  const grpcBare = grpc?.server.find((v) => v.variant === 'bare');
  if (grpc !== undefined && grpcBare !== undefined && grpc.inProcess.length > 0) {
    const overs = grpc.inProcess.map((run) => run.server.floodgate - run.server.bare);
    const over = median(overs);
    const share = over / grpcMedian(grpcBare, (r) => r.serverCpuUsPerCall);
    checks.push({
      target: 'gRPC server: Floodgate adds <= 2 µs of CPU per unary call, or < 5 % of a bare call (#29)',
      figure: `+${over.toFixed(2)} µs in-process (${(share * 100).toFixed(1)} % of a bare call end to end; processes ${overs.map((us) => us.toFixed(2)).join(', ')})`,
      verdict: over <= 2 || share < 0.05 ? 'met' : 'missed',
    });
  }
  const cluster = results.cluster?.cases ?? [];
  const ops = (prefix: string): number | undefined => cluster.find((c) => c.name.startsWith(prefix))?.opsPerSec;
  for (const [fg, peer, min, target] of [
    [
      'floodgate cluster flow rule (global window)',
      'rate-limiter-flexible RateLimiterRedis, one key',
      2,
      'cluster check, one key, 64 in flight: >= 2× RateLimiterRedis (issue #18)',
    ],
    [
      'floodgate cluster hotspot rule',
      'rate-limiter-flexible RateLimiterRedis, 1000 keys',
      1.2,
      'cluster check, 1,000 keys, 64 in flight: >= 1.2× RateLimiterRedis (issue #18)',
    ],
  ] as const) {
    const a = ops(fg);
    const b = ops(peer);
    if (a === undefined || b === undefined) {
      checks.push({ target, figure: 'not run', verdict: 'pending' });
      continue;
    }
    checks.push({
      target,
      figure: `${(a / b).toFixed(2)}× (${Math.round(a).toLocaleString('en-US')} vs ${Math.round(b).toLocaleString('en-US')} calls/s)`,
      verdict: a / b >= min ? 'met' : 'missed',
    });
  }
  checks.push(...outboundTargets(results.outbound));
  return checks;
}

/** `a`'s cost per call over `b`'s in this run, checked by `holds`; pending when either did not run. */
function timesTarget(
  a: CoreCaseResult | undefined,
  b: CoreCaseResult | undefined,
  target: string,
  holds: (times: number) => boolean,
): TargetCheck {
  if (a === undefined || b === undefined || !Number.isFinite(a.medianNs) || !Number.isFinite(b.medianNs))
    return { target, figure: a?.failed ?? b?.failed ?? 'not run', verdict: 'pending' };
  const times = a.medianNs / b.medianNs;
  return {
    target,
    figure: `${times.toFixed(2)}× (${formatNs(a.medianNs)} vs ${formatNs(b.medianNs)})`,
    verdict: holds(times) ? 'met' : 'missed',
  };
}

/** The outbound targets (issue #26): CPU per call over bare undici, beside cockatiel's; load amplification. */
function outboundTargets(outbound: OutboundSuiteResult | undefined): TargetCheck[] {
  const targets = [
    'outbound request(): Floodgate interceptor <= +2 µs of CPU per call over bare undici (issue #26)',
    'outbound fetch(): Floodgate interceptor <= +2 µs of CPU per call over bare undici (issue #26)',
    'outbound fetch(): Floodgate interceptor costs less CPU per call than cockatiel wrap(retry, breaker, timeout) (issue #26)',
    'outbound, failing upstream, retries on: <= 1.2 requests per call (issue #26)',
  ];
  // Runs saved before the suite existed render as they did: no outbound rows.
  if (outbound === undefined) return [];
  const us = (id: string): number => outbound.cases.find((c) => c.id === id)?.cpuUsPerCall ?? Number.NaN;
  const over = (id: string, bare: string, target: string): TargetCheck => {
    const extra = us(id) - us(bare);
    return {
      target,
      figure: `${extra >= 0 ? '+' : ''}${extra.toFixed(2)} µs (${us(id).toFixed(2)} vs ${us(bare).toFixed(2)} µs)`,
      verdict: Number.isNaN(extra) ? 'pending' : extra <= 2 ? 'met' : 'missed',
    };
  };
  const fg = us('fetch.floodgate');
  const peer = us('fetch.cockatiel');
  const amplification = outbound.amplification.floodgate;
  return [
    over('request.floodgate', 'request.bare', targets[0]!),
    over('fetch.floodgate', 'fetch.bare', targets[1]!),
    {
      target: targets[2]!,
      figure: `${fg.toFixed(2)} vs ${peer.toFixed(2)} µs`,
      verdict: Number.isNaN(fg) || Number.isNaN(peer) ? 'pending' : fg < peer ? 'met' : 'missed',
    },
    {
      target: targets[3]!,
      figure: `${amplification.toFixed(3)}× (cockatiel retry(2): ${outbound.amplification.cockatiel.toFixed(3)}×)`,
      verdict: amplification <= 1.2 ? 'met' : 'missed',
    },
  ];
}

/**
 * An HTTP target: the median req/s ratio to bare must be at least `min`. On a busy machine a
 * drift inside one run moves req/s, so the server's CPU per response is the cross-check: the
 * target holds when the variant costs at most 1/`min` of bare's CPU per response. Both agree:
 * met or missed; they disagree: unclear.
 */
function ratioCheck(checks: TargetCheck[], v: HttpVariantResult | undefined, min: number, target: string): void {
  if (v === undefined || v.rounds.length === 0) {
    checks.push({ target, figure: 'not run', verdict: 'pending' });
    return;
  }
  const rps = median(v.rpsRatios);
  const cpu = median(v.cpuRatios);
  const byRps = rps >= min;
  const byCpu = cpu <= 1 / min;
  checks.push({
    target,
    figure: `${formatRatio(rps)} of bare req/s (rounds ${formatRange(v.rpsRatios, formatRatio)}); CPU per response ${formatRatio(cpu)}× bare (needs <= ${formatRatio(1 / min)})`,
    verdict: byRps && byCpu ? 'met' : !byRps && !byCpu ? 'missed' : 'unclear',
  });
}

/** Heap (heapUsed + arrayBuffers) growth from the capacity checkpoint to the last one, as a fraction. */
export function heapGrowth(m: MemorySubjectResult): number {
  const total = (i: number): number => m.points[i]!.heapUsed + m.points[i]!.arrayBuffers;
  const at = m.points.findIndex((p) => p.values === m.capacity);
  if (at < 0) return Number.NaN;
  return total(m.points.length - 1) / total(at) - 1;
}
