import { join } from 'node:path';
import { median } from '../lib/median';
import { pinProcess } from '../lib/pinned-command';
import { processCpuMs, waitUntilIdle } from '../http/process-cpu';
import { startListeningProcess, type ServerProcess } from '../http/server-process';
import { openLoop, percentile, type OpenLoopResult } from './open-loop';
import { OVERLOAD_VARIANTS, WORK_MS, type OverloadVariant } from './overload-server';

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
}

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
  const start = (variant: OverloadVariant): Promise<ServerProcess> =>
    startListeningProcess(script, [variant], settings.serverCore);
  let capacity: number;
  {
    const server = await start('none');
    try {
      await openLoop(server.port, { path: PATH, ratePerSecond: 1e9, count: 200, maxInFlight: 4 }); // warm-up
      const measured = await openLoop(server.port, { path: PATH, ratePerSecond: 1e9, count: 400, maxInFlight: 4 });
      capacity = measured.okLatenciesMs.length / measured.seconds;
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
      const server = await start(variant);
      try {
        await openLoop(server.port, {
          path: PATH,
          ratePerSecond: capacity / 2,
          count: Math.round(capacity / 2),
          deadlineMs: settings.deadlineMs,
        }); // warm-up, unrecorded
        await waitUntilIdle(server.pid);
        const cpuBefore = processCpuMs(server.pid);
        const result = await openLoop(server.port, {
          path: PATH,
          ratePerSecond: rate,
          count: Math.round(rate * settings.seconds),
          deadlineMs: settings.deadlineMs,
        });
        const run: OverloadRun = {
          ...result,
          p50Ms: percentile(result.okLatenciesMs, 50),
          p99Ms: percentile(result.okLatenciesMs, 99),
          goodput: result.okLatenciesMs.length / result.seconds,
          serverCpuMs: processCpuMs(server.pid) - cpuBefore,
        };
        runs.get(variant)!.push(run);
        settings.log(
          `  overload/${variant} round ${round + 1}: 200×${result.statuses['200'] ?? 0} 503×${result.statuses['503'] ?? 0} gave up ${result.timedOut + result.failed}; ` +
            `p99 ${run.p99Ms.toFixed(0)} ms, goodput ${run.goodput.toFixed(0)} req/s`,
        );
      } finally {
        await server.stop();
      }
    }
  }
  // the raw latencies are summarised by p50/p99 above; keep the saved run small
  const variants = OVERLOAD_VARIANTS.map((variant) => ({
    variant,
    runs: runs.get(variant)!.map((r) => ({ ...r, okLatenciesMs: [] })),
  }));
  return { capacity, rate, workMs: WORK_MS, variants };
}

/** The median over runs of one figure of a variant. */
export function overloadMedian(result: OverloadVariantResult, pick: (run: OverloadRun) => number): number {
  return median(result.runs.map(pick));
}
