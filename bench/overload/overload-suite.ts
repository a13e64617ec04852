import { join } from 'node:path';
import { median } from '../lib/median';
import { pinProcess } from '../lib/pinned-command';
import { processCpuMs, waitUntilIdle } from '../http/process-cpu';
import { startListeningProcess, type ServerProcess } from '../http/server-process';
import { openLoop, percentile, type OpenLoopResult } from './open-loop';
import { MIXED_VARIANTS, OVERLOAD_VARIANTS, WORK_MS, type MixedVariant, type OverloadVariant } from './overload-server';

/** How the overload suite runs. */
export interface OverloadSuiteSettings {
  /** Interleaved rounds (every variant once per round, in a fresh server). */
  readonly rounds: number;
  /** Seconds of overload per run. */
  readonly seconds: number;
  /** The load, as a multiple of the measured capacity. */
  readonly overload: number;
  /** Clients give up on a request after this many ms. */
  readonly deadlineMs: number;
  /** The loads of mixed traffic (20 % critical, 80 % sheddable), as multiples of the capacity. */
  readonly mixedLoads: readonly number[];
  readonly serverCore: number;
  readonly loadCore: number;
  readonly log: (line: string) => void;
}

/** One run of one variant. */
export interface OverloadRun extends OpenLoopResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** 200s per second of the run (each answered within the deadline). */
  readonly goodput: number;
  /** The server's CPU over the run, in ms. */
  readonly serverCpuMs: number;
}

/** Every run of one variant. */
export interface OverloadVariantResult {
  readonly variant: OverloadVariant;
  readonly runs: OverloadRun[];
}

/** What the suite measured. */
export interface OverloadSuiteResult {
  /** 200s per second the unguarded server answers with 4 requests in flight. */
  readonly capacity: number;
  /** The offered load, in requests per second. */
  readonly rate: number;
  readonly workMs: number;
  readonly variants: OverloadVariantResult[];
  /** The route's p99 unloaded: one request in flight at a time, unguarded, in ms. */
  readonly unloadedP99Ms?: number;
  /** Mixed traffic, by load and guard. */
  readonly mixed?: MixedResult[];
}

/** One run of mixed traffic. */
export interface MixedRun {
  /** Critical requests answered 200 (within the deadline) / critical requests sent. */
  readonly criticalSuccess: number;
  /** p99 of the critical 200s, in ms. */
  readonly criticalP99Ms: number;
  /** Every 200 per second (within the deadline), critical or not. */
  readonly goodput: number;
}

/** Every run of mixed traffic of one guard at one load. */
export interface MixedResult {
  readonly load: number;
  readonly variant: MixedVariant;
  readonly runs: MixedRun[];
}

/** Every fifth request is critical (20 %), the rest sheddable. */
const mixedPriority = (i: number): string => (i % 5 === 0 ? 'critical' : 'sheddable');

const PATH = '/report';

/**
 * Measures the route's capacity (4 requests in flight against the unguarded server: enough to
 * keep its one thread busy, too few to queue), then, in interleaved rounds, starts a fresh server
 * per variant (pinned to the server core), warms it for a second at half its capacity, and drives
 * it at `overload` × capacity, open loop, for `seconds`, from this process (pinned to the other
 * core). Reports what clients got: p50 / p99 of the 200s and goodput (200s per second).
 */
export async function runOverloadSuite(distDir: string, settings: OverloadSuiteSettings): Promise<OverloadSuiteResult> {
  const script = join(distDir, 'overload', 'overload-server.js');
  pinProcess(process.pid, settings.loadCore);
  const start = (variant: OverloadVariant | MixedVariant): Promise<ServerProcess> =>
    startListeningProcess(script, [variant], settings.serverCore);
  let capacity: number;
  {
    const server = await start('none');
    try {
      await openLoop(server.port, { path: PATH, ratePerSecond: 1e9, count: 200, maxInFlight: 4 }); // warm-up
      const measured = await openLoop(server.port, { path: PATH, ratePerSecond: 1e9, count: 400, maxInFlight: 4 });
      capacity = goodputOf(measured);
    } finally {
      await server.stop();
    }
  }
  const rate = capacity * settings.overload;
  settings.log(`  overload: capacity ${capacity.toFixed(0)} req/s, driving at ${rate.toFixed(0)} req/s`);
  const runs = new Map<OverloadVariant, OverloadRun[]>(OVERLOAD_VARIANTS.map((v) => [v, []]));
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 === 0 ? OVERLOAD_VARIANTS : [...OVERLOAD_VARIANTS].reverse();
    for (const variant of order) {
      const { result, serverCpuMs } = await driveFresh(start, variant, capacity, rate, settings);
      const run: OverloadRun = {
        ...result,
        p50Ms: percentile(result.okLatenciesMs, 50),
        p99Ms: percentile(result.okLatenciesMs, 99),
        goodput: goodputOf(result),
        serverCpuMs,
      };
      runs.get(variant)!.push(run);
      settings.log(
        `  overload/${variant} round ${round + 1}: 200×${result.statuses['200'] ?? 0} 503×${result.statuses['503'] ?? 0} gave up ${result.timedOut + result.failed}; ` +
          `p99 ${run.p99Ms.toFixed(0)} ms, goodput ${run.goodput.toFixed(0)} req/s`,
      );
    }
  }
  // the raw latencies are summarised by p50/p99 above; keep the saved run small
  const variants = OVERLOAD_VARIANTS.map((variant) => ({
    variant,
    runs: runs.get(variant)!.map((r) => ({ ...r, okLatenciesMs: [], byPriority: undefined })),
  }));
  if (settings.mixedLoads.length === 0) return { capacity, rate, workMs: WORK_MS, variants };
  const { unloadedP99Ms, mixed } = await runMixed(start, capacity, settings);
  return { capacity, rate, workMs: WORK_MS, variants, unloadedP99Ms, mixed };
}

/**
 * One recorded run: a fresh server of `variant`, warmed for a second at half the capacity
 * (unrecorded), left to go idle, then driven at `rate` for `settings.seconds`, open loop.
 */
async function driveFresh(
  start: (variant: OverloadVariant | MixedVariant) => Promise<ServerProcess>,
  variant: OverloadVariant | MixedVariant,
  capacity: number,
  rate: number,
  settings: OverloadSuiteSettings,
  priorityOf?: (i: number) => string,
): Promise<{ result: OpenLoopResult; serverCpuMs: number }> {
  const server = await start(variant);
  try {
    const load = { path: PATH, deadlineMs: settings.deadlineMs, ...(priorityOf ? { priorityOf } : {}) };
    await openLoop(server.port, { ...load, ratePerSecond: capacity / 2, count: Math.round(capacity / 2) });
    await waitUntilIdle(server.pid);
    const cpuBefore = processCpuMs(server.pid);
    const result = await openLoop(server.port, {
      ...load,
      ratePerSecond: rate,
      count: Math.round(rate * settings.seconds),
    });
    return { result, serverCpuMs: processCpuMs(server.pid) - cpuBefore };
  } finally {
    await server.stop();
  }
}

/**
 * Mixed traffic: the route's unloaded p99 (one request at a time, unguarded), then at each load,
 * in interleaved rounds, every mixed guard in a fresh server, driven open loop with every fifth
 * request `x-priority: critical` and the rest `sheddable`.
 */
async function runMixed(
  start: (variant: OverloadVariant | MixedVariant) => Promise<ServerProcess>,
  capacity: number,
  settings: OverloadSuiteSettings,
): Promise<{ unloadedP99Ms: number; mixed: MixedResult[] }> {
  let unloadedP99Ms: number;
  {
    const server = await start('none');
    try {
      await openLoop(server.port, { path: PATH, ratePerSecond: 1e9, count: 100, maxInFlight: 1 }); // warm-up
      const unloaded = await openLoop(server.port, { path: PATH, ratePerSecond: 1e9, count: 400, maxInFlight: 1 });
      unloadedP99Ms = percentile(unloaded.okLatenciesMs, 99);
    } finally {
      await server.stop();
    }
  }
  settings.log(`  overload/mixed: unloaded p99 ${unloadedP99Ms.toFixed(1)} ms`);
  const mixed: MixedResult[] = [];
  for (const load of settings.mixedLoads) {
    const results = new Map<MixedVariant, MixedRun[]>(MIXED_VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? MIXED_VARIANTS : [...MIXED_VARIANTS].reverse();
      for (const variant of order) {
        const { result } = await driveFresh(start, variant, capacity, capacity * load, settings, mixedPriority);
        const critical = result.byPriority?.critical;
        const run: MixedRun = {
          criticalSuccess: critical === undefined ? Number.NaN : critical.okLatenciesMs.length / critical.sent,
          criticalP99Ms: critical === undefined ? Number.NaN : percentile(critical.okLatenciesMs, 99),
          goodput: goodputOf(result),
        };
        results.get(variant)!.push(run);
        settings.log(
          `  overload/mixed ${load}× ${variant} round ${round + 1}: critical ${(run.criticalSuccess * 100).toFixed(2)} % ok ` +
            `(${Object.entries(critical?.statuses ?? {})
              .map(([status, n]) => `${status}×${n}`)
              .join(' ')} of ${critical?.sent ?? 0}), ` +
            `critical p99 ${run.criticalP99Ms.toFixed(0)} ms, goodput ${(run.goodput / capacity).toFixed(2)} of capacity`,
        );
      }
    }
    for (const variant of MIXED_VARIANTS) mixed.push({ load, variant, runs: results.get(variant)! });
  }
  return { unloadedP99Ms, mixed };
}

/** The median over runs of one figure of a variant. */
export function overloadMedian(result: OverloadVariantResult, pick: (run: OverloadRun) => number): number {
  return median(result.runs.map(pick));
}

/**
 * 200s per second while the load was offered: those answered while requests were still being
 * sent, over the time they were sent. The drain after the last request is in neither (a queue
 * of 500 ms drains for up to 500 ms, in which no request arrives: a run's whole length would
 * count that as goodput lost).
 */
function goodputOf(result: OpenLoopResult): number {
  return result.okWhileSending / result.sendingSeconds;
}
