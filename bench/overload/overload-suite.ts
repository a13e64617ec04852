import { join } from 'node:path';
import { median } from '../lib/median';
import { pinProcess } from '../lib/pinned-command';
import { processCpuMs, waitUntilIdle } from '../http/process-cpu';
import { startListeningProcess, type ServerProcess } from '../http/server-process';
import { openLoop, percentile, type OpenLoopResult } from './open-loop';
import {
  MIXED_VARIANTS,
  OVERLOAD_VARIANTS,
  REFUSED_PATH,
  UNGUARDED_PATH,
  WORK_MS,
  type MixedVariant,
  type OverloadVariant,
} from './overload-server';

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

/**
 * What the unguarded route gave at the start of a round, before its guards ran: the figures that
 * round's loads and ratios are taken against (measured again each round, as a machine's speed
 * drifts between runs and rounds: one measure per run moved the ratios with it).
 */
export interface Baseline {
  /** 200s per second with 4 requests in flight: enough to keep its one thread busy, too few to queue. */
  readonly capacity: number;
  /** The route's p99 with one request in flight at a time, in ms. */
  readonly unloadedP99Ms: number;
  /**
   * The most goodput any guard in the server could give at each mixed load, as a share of what
   * the route gives alone (see {@link Ceiling}). Runs saved before it was measured have none.
   */
  readonly ceilings?: readonly Ceiling[];
}

/**
 * What the refusals of one load leave the route: the 200s per second it answers with 4 requests
 * in flight while requests to `/refused` (answered 503 before any middleware: a guard that costs
 * nothing to decide) arrive at (load − 1) × capacity, the refusals a guard serving the capacity
 * answers, over its 200s per second alone. Both in the same server, in alternating phases, the
 * median of the pairs' ratios.
 */
export interface Ceiling {
  /** The load, as a multiple of the capacity. */
  readonly load: number;
  /** The route's 200s per second beside those refusals over alone (at most about 1). */
  readonly ratio: number;
}

/** One run of one variant. */
export interface OverloadRun extends OpenLoopResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** 200s per second of the run (each answered within the deadline). */
  readonly goodput: number;
  /** The server's CPU over the run, in ms. */
  readonly serverCpuMs: number;
  /** The baseline of the run's round (runs saved before it was measured per round have none). */
  readonly baseline?: Baseline;
  /**
   * The route's capacity in the run's own server: 200s per second with 4 requests in flight on
   * the same work past every guard (`/unguarded`), measured just before the run and again just
   * after, the mean of the two. The run's goodput / capacity is over it (runs saved before it
   * was measured per run: over their round's baseline), so the machine's speed, which drifts on
   * a shared VM by a tenth within a minute, moves both sides of the ratio together.
   */
  readonly capacity?: number;
}

/** Every run of one variant. */
export interface OverloadVariantResult {
  readonly variant: OverloadVariant;
  readonly runs: OverloadRun[];
}

/** What the suite measured. */
export interface OverloadSuiteResult {
  /** 200s per second the unguarded server answers with 4 requests in flight (the median over rounds). */
  readonly capacity: number;
  /** The offered load, in requests per second (the median over rounds). */
  readonly rate: number;
  readonly workMs: number;
  /**
   * How the route's work is bounded: `'timed'`, busy for `workMs` of the clock per request (see
   * `busy` in overload-server.ts); absent in runs saved before, whose route ran a count of loop
   * iterations calibrated at the server's start, and whose cost changed part-way through a server.
   */
  readonly work?: 'timed';
  readonly variants: OverloadVariantResult[];
  /** The route's p99 unloaded: one request in flight at a time, unguarded, in ms (the median over rounds). */
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
  /** The baseline of the run's round (runs saved before it was measured per round have none). */
  readonly baseline?: Baseline;
  /** See {@link OverloadRun.capacity}. */
  readonly capacity?: number;
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

type Start = (variant: OverloadVariant | MixedVariant) => Promise<ServerProcess>;

/**
 * Interleaved rounds, each whole in itself: first the round's {@link Baseline} (a fresh unguarded
 * server), then every variant in a fresh server (pinned to the server core), warmed for a second
 * at half that capacity and driven open loop at `overload` × capacity for `seconds` from this
 * process (pinned to the other core); then mixed traffic at each of `mixedLoads` × capacity, every
 * mixed guard in turn, every fifth request `x-priority: critical` and the rest `sheddable`.
 * Variants run in order on even rounds, in reverse on odd ones. Each run's ratios are taken
 * against its own round's baseline, so rounds of several runs can be pooled (`--append`).
 * Reports what clients got: p50 / p99 of the 200s and goodput (200s per second).
 */
export async function runOverloadSuite(distDir: string, settings: OverloadSuiteSettings): Promise<OverloadSuiteResult> {
  const script = join(distDir, 'overload', 'overload-server.js');
  pinProcess(process.pid, settings.loadCore);
  const start: Start = (variant) => startListeningProcess(script, [variant], settings.serverCore);
  const runs = new Map<OverloadVariant, OverloadRun[]>(OVERLOAD_VARIANTS.map((v) => [v, []]));
  const mixedRuns = new Map<string, MixedRun[]>();
  const baselines: Baseline[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const baseline = await measureBaseline(start, settings.mixedLoads);
    baselines.push(baseline);
    const { capacity } = baseline;
    const rate = capacity * settings.overload;
    const ceilings = (baseline.ceilings ?? []).map((c) => `${c.ratio.toFixed(2)} at ${c.load}×`);
    settings.log(
      `  overload round ${round + 1}: capacity ${capacity.toFixed(0)} req/s, unloaded p99 ${baseline.unloadedP99Ms.toFixed(1)} ms, ` +
        `ceiling ${ceilings.join(', ')}; driving at ${rate.toFixed(0)} req/s`,
    );
    const reversed = round % 2 === 1;
    for (const variant of reversed ? [...OVERLOAD_VARIANTS].reverse() : OVERLOAD_VARIANTS) {
      const { result, serverCpuMs, ownCapacity } = await driveFresh(start, variant, capacity, rate, settings);
      const run: OverloadRun = {
        ...result,
        p50Ms: percentile(result.okLatenciesMs, 50),
        p99Ms: percentile(result.okLatenciesMs, 99),
        goodput: goodputOf(result),
        serverCpuMs,
        baseline,
        capacity: ownCapacity,
      };
      runs.get(variant)!.push(run);
      settings.log(
        `  overload/${variant} round ${round + 1}: 200×${result.statuses['200'] ?? 0} 503×${result.statuses['503'] ?? 0} gave up ${result.timedOut + result.failed}; ` +
          `p99 ${run.p99Ms.toFixed(0)} ms, goodput ${run.goodput.toFixed(0)} req/s of capacity ${ownCapacity.toFixed(0)}`,
      );
    }
    for (const load of settings.mixedLoads) {
      for (const variant of reversed ? [...MIXED_VARIANTS].reverse() : MIXED_VARIANTS) {
        const { result, ownCapacity } = await driveFresh(
          start,
          variant,
          capacity,
          capacity * load,
          settings,
          mixedPriority,
        );
        const critical = result.byPriority?.critical;
        const run: MixedRun = {
          criticalSuccess: critical === undefined ? Number.NaN : critical.okLatenciesMs.length / critical.sent,
          criticalP99Ms: critical === undefined ? Number.NaN : percentile(critical.okLatenciesMs, 99),
          goodput: goodputOf(result),
          baseline,
          capacity: ownCapacity,
        };
        const key = `${load}/${variant}`;
        mixedRuns.set(key, [...(mixedRuns.get(key) ?? []), run]);
        settings.log(
          `  overload/mixed ${load}× ${variant} round ${round + 1}: critical ${(run.criticalSuccess * 100).toFixed(2)} % ok ` +
            `(${Object.entries(critical?.statuses ?? {})
              .map(([status, n]) => `${status}×${n}`)
              .join(' ')} of ${critical?.sent ?? 0}), ` +
            `critical p99 ${run.criticalP99Ms.toFixed(0)} ms, goodput ${(run.goodput / ownCapacity).toFixed(2)} of capacity ${ownCapacity.toFixed(0)}`,
        );
      }
    }
  }
  // the raw latencies are summarised by p50/p99 above; keep the saved run small
  const variants = OVERLOAD_VARIANTS.map((variant) => ({
    variant,
    runs: runs.get(variant)!.map((r) => ({ ...r, okLatenciesMs: [], byPriority: undefined })),
  }));
  const mixed = settings.mixedLoads.flatMap((load) =>
    MIXED_VARIANTS.map((variant) => ({ load, variant, runs: mixedRuns.get(`${load}/${variant}`) ?? [] })),
  );
  return {
    ...summarizeBaselines(baselines, settings.overload),
    workMs: WORK_MS,
    work: 'timed',
    variants,
    ...(mixed.length > 0 ? { mixed } : {}),
  };
}

/**
 * Each round's baseline, in order, as the runs of the first guard carry them; `undefined` for a
 * suite saved before rounds measured their own.
 */
export function roundBaselines(overload: Pick<OverloadSuiteResult, 'variants'>): Baseline[] | undefined {
  const runs = overload.variants[0]?.runs ?? [];
  const baselines = runs.map((run) => run.baseline);
  return runs.length > 0 && baselines.every((b) => b !== undefined) ? (baselines as Baseline[]) : undefined;
}

/** The suite's capacity, offered rate and unloaded p99: medians over its rounds' baselines. */
export function summarizeBaselines(
  baselines: readonly Baseline[],
  overload: number,
): Pick<OverloadSuiteResult, 'capacity' | 'rate' | 'unloadedP99Ms'> {
  const capacity = median(baselines.map((b) => b.capacity));
  return { capacity, rate: capacity * overload, unloadedP99Ms: median(baselines.map((b) => b.unloadedP99Ms)) };
}

/** Pairs of phases of a ceiling, and requests served per phase. */
export const CEILING_PAIRS = 4;
export const CEILING_PHASE_REQUESTS = 100;

/**
 * A round's baseline, in a fresh unguarded server: its capacity (200 requests of warm-up, then
 * 400 at 4 in flight), its unloaded p99 (400 requests one at a time), and its ceiling at each
 * of `loads`.
 */
async function measureBaseline(start: Start, loads: readonly number[]): Promise<Baseline> {
  const server = await start('none');
  try {
    const closed = { path: PATH, ratePerSecond: 1e9, count: 400, maxInFlight: 4 };
    await openLoop(server.port, { ...closed, count: 200 }); // warm-up
    const loaded = await openLoop(server.port, closed);
    const unloaded = await openLoop(server.port, { ...closed, maxInFlight: 1 });
    const capacity = goodputOf(loaded);
    const ceilings: Ceiling[] = [];
    for (const load of loads) ceilings.push({ load, ratio: await measureCeiling(server.port, (load - 1) * capacity) });
    return { capacity, unloadedP99Ms: percentile(unloaded.okLatenciesMs, 99), ceilings };
  } finally {
    await server.stop();
  }
}

/**
 * The route's goodput while refused requests arrive at `refusalRate`, over its goodput alone:
 * {@link CEILING_PAIRS} pairs of phases (alone, then beside the refusals, each
 * {@link CEILING_PHASE_REQUESTS} requests at 4 in flight), the median of the pairs' ratios, so a
 * drift of the machine's speed moves both sides of each.
 */
async function measureCeiling(port: number, refusalRate: number): Promise<number> {
  const phase = { path: PATH, ratePerSecond: 1e9, count: CEILING_PHASE_REQUESTS, maxInFlight: 4 };
  const ratios: number[] = [];
  for (let pair = 0; pair < CEILING_PAIRS; pair++) {
    const alone = goodputOf(await openLoop(port, phase));
    const stop = new AbortController();
    const refusals = openLoop(port, {
      path: REFUSED_PATH,
      ratePerSecond: refusalRate,
      count: Number.MAX_SAFE_INTEGER,
      signal: stop.signal,
    });
    const beside = goodputOf(await openLoop(port, phase));
    stop.abort();
    await refusals;
    ratios.push(beside / alone);
  }
  return median(ratios);
}

/**
 * One recorded run: a fresh server of `variant`, warmed for a second at half the capacity
 * (unrecorded), left to go idle, its own capacity measured (see {@link OverloadRun.capacity}), driven at
 * `rate` for `settings.seconds`, open loop, left to go idle, and its capacity measured again.
 */
async function driveFresh(
  start: Start,
  variant: OverloadVariant | MixedVariant,
  capacity: number,
  rate: number,
  settings: OverloadSuiteSettings,
  priorityOf?: (i: number) => string,
): Promise<{ result: OpenLoopResult; serverCpuMs: number; ownCapacity: number }> {
  const server = await start(variant);
  const measureCapacity = async (): Promise<number> => {
    // Long enough for an unguarded server to finish the requests its clients gave up on.
    await waitUntilIdle(server.pid, IDLE_WAIT_MS);
    const phase = { path: UNGUARDED_PATH, ratePerSecond: 1e9, count: CAPACITY_REQUESTS, maxInFlight: 4 };
    return goodputOf(await openLoop(server.port, phase));
  };
  try {
    const load = { path: PATH, deadlineMs: settings.deadlineMs, ...(priorityOf ? { priorityOf } : {}) };
    await openLoop(server.port, { ...load, ratePerSecond: capacity / 2, count: Math.round(capacity / 2) });
    const before = await measureCapacity();
    await waitUntilIdle(server.pid);
    const cpuBefore = processCpuMs(server.pid);
    const result = await openLoop(server.port, {
      ...load,
      ratePerSecond: rate,
      count: Math.round(rate * settings.seconds),
    });
    const serverCpuMs = processCpuMs(server.pid) - cpuBefore;
    return { result, serverCpuMs, ownCapacity: (before + (await measureCapacity())) / 2 };
  } finally {
    await server.stop();
  }
}

/** The longest wait for a server to go idle before measuring its capacity. */
const IDLE_WAIT_MS = 20_000;

/** Requests of each measure of a run's own capacity (about 1.5 s at 4 in flight). */
const CAPACITY_REQUESTS = 150;

/**
 * A run's goodput over its own server's capacity (see {@link OverloadRun.capacity}); for runs saved before
 * that was measured, over its round's (or, older still, the suite's).
 */
export function goodputRatio(
  run: { readonly goodput: number; readonly capacity?: number; readonly baseline?: Baseline },
  overload: Pick<OverloadSuiteResult, 'capacity'>,
): number {
  return run.goodput / (run.capacity ?? run.baseline?.capacity ?? overload.capacity);
}

/**
 * A run's goodput / capacity over its round's ceiling at `load` (see {@link Ceiling}): the share
 * it gave of what any guard could have given. NaN for runs saved before ceilings were measured.
 */
export function ceilingRatio(
  run: { readonly goodput: number; readonly capacity?: number; readonly baseline?: Baseline },
  overload: Pick<OverloadSuiteResult, 'capacity'>,
  load: number,
): number {
  const ceiling = run.baseline?.ceilings?.find((c) => c.load === load);
  return ceiling === undefined ? Number.NaN : goodputRatio(run, overload) / ceiling.ratio;
}

/** A mixed run's critical p99 over its round's unloaded p99 (the suite's, for runs saved before). */
export function criticalP99Ratio(run: MixedRun, overload: Pick<OverloadSuiteResult, 'unloadedP99Ms'>): number {
  return run.criticalP99Ms / (run.baseline?.unloadedP99Ms ?? overload.unloadedP99Ms ?? Number.NaN);
}

/** Whether the suite's runs measured their own server's capacity (see {@link OverloadRun.capacity}). */
export function ownCapacities(overload: Pick<OverloadSuiteResult, 'variants'>): boolean {
  return overload.variants.some((v) => v.runs.some((r) => r.capacity !== undefined));
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
