import { join } from 'node:path';
import { median } from '../lib/median';
import { pinProcess } from '../lib/pinned-command';
import { FRAMEWORKS, HTTP_VARIANTS, isBlockedVariant, type Framework, type HttpVariant } from './http-variant';
import { processCpuMs, waitUntilIdle } from './process-cpu';
import { runLoad, type LoadResult } from './run-load';
import { startServerProcess, type ServerProcess } from './server-process';

/** How the HTTP suite runs. */
export interface HttpSuiteSettings {
  /** Interleaved rounds (every variant once per round). */
  readonly rounds: number;
  /** Length of one measured load run, in s. */
  readonly seconds: number;
  /** Unrecorded load on every server at once before the first round, in s (JIT warm-up). */
  readonly warmSeconds: number;
  readonly connections: number;
  readonly pipelining: number;
  /** Core for the servers; the load generator (this process, pinned for the suite) gets the other one. */
  readonly serverCore: number;
  readonly loadCore: number;
  readonly log: (line: string) => void;
}

/** One measured load run against one server. */
export interface HttpRound extends LoadResult {
  /** Server CPU time per response, in µs (robust to a busy machine: it counts only the server's own work). */
  readonly cpuUsPerResponse: number;
  /** Server CPU time / wall time of the run (1.0 = the server's core was saturated). */
  readonly serverBusy: number;
  /** Share of responses with the expected status (2xx, or 429 for blocked variants). */
  readonly expectedShare: number;
}

/** One variant on one framework across the rounds. */
export interface HttpVariantResult {
  readonly variant: HttpVariant;
  readonly rounds: HttpRound[];
  /** Per round, this variant's figure / bare's figure of the same round. */
  readonly rpsRatios: number[];
  readonly cpuRatios: number[];
  /** Per round, server CPU per response minus the no-op middleware's of the same round, in µs. */
  readonly cpuOverNoopUs: number[];
}

/** Everything measured on one framework. */
export interface HttpFrameworkResult {
  readonly framework: Framework;
  readonly variants: HttpVariantResult[];
}

/**
 * Starts one server process per framework and variant (each pinned to one core once it
 * listens). For each framework, warms its servers, then runs autocannon (in this process,
 * pinned to the other core) against them in interleaved
 * rounds, in `HTTP_VARIANTS` order and the reverse order on odd
 * rounds, so slow drifts of a busy machine hit every variant alike. Ratios are taken within a
 * round, then the median over rounds is reported.
 */
export async function runHttpSuite(distDir: string, settings: HttpSuiteSettings): Promise<HttpFrameworkResult[]> {
  const serverScript = join(distDir, 'http', 'server-worker.js');
  pinProcess(process.pid, settings.loadCore);
  const load = (server: ServerProcess, seconds: number): Promise<LoadResult> =>
    runLoad(server.port, seconds, settings.connections, settings.pipelining, () => processCpuMs(server.pid));
  const all = new Map<string, ServerProcess>();
  const key = (framework: Framework, variant: HttpVariant): string => `${framework}/${variant}`;
  const results: HttpFrameworkResult[] = [];
  try {
    // every server at once: start-up runs on both cores, each is pinned once listening
    const pairs = FRAMEWORKS.flatMap((framework) => HTTP_VARIANTS.map((variant) => [framework, variant] as const));
    const started = await Promise.allSettled(
      pairs.map(([framework, variant]) => startServerProcess(serverScript, framework, variant, settings.serverCore)),
    );
    started.forEach((s, i) => {
      if (s.status === 'fulfilled') all.set(key(...pairs[i]!), s.value);
    });
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    settings.log(`  ${all.size} servers listening`);
    for (const framework of FRAMEWORKS) {
      const servers = new Map(HTTP_VARIANTS.map((variant) => [variant, all.get(key(framework, variant))!]));
      // unrecorded, so a framework's servers all at once: JIT warm-up
      await Promise.all([...servers.values()].map((server) => load(server, settings.warmSeconds)));
      for (const server of servers.values()) await waitUntilIdle(server.pid);
      settings.log(`  ${framework}: warmed up`);
      const rounds = new Map<HttpVariant, HttpRound[]>(HTTP_VARIANTS.map((v) => [v, []]));
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? HTTP_VARIANTS : [...HTTP_VARIANTS].reverse();
        for (const variant of order) {
          const server = servers.get(variant)!;
          const measured = toRound(variant, await load(server, settings.seconds));
          await waitUntilIdle(server.pid);
          rounds.get(variant)!.push(measured);
          settings.log(
            `  ${framework}/${variant} round ${round + 1}: ${Math.round(measured.rps)} req/s, p50 ${measured.p50} ms, p99 ${measured.p99} ms, ` +
              `${measured.cpuUsPerResponse.toFixed(1)} µs CPU/response, server busy ${(measured.serverBusy * 100).toFixed(0)} %`,
          );
        }
      }
      const bare = rounds.get('bare')!;
      const noop = rounds.get('noop')!;
      results.push({
        framework,
        variants: HTTP_VARIANTS.map((variant) => {
          const own = rounds.get(variant)!;
          return {
            variant,
            rounds: own,
            rpsRatios: own.map((r, i) => r.rps / (bare[i]?.rps ?? Number.NaN)),
            cpuRatios: own.map((r, i) => r.cpuUsPerResponse / (bare[i]?.cpuUsPerResponse ?? Number.NaN)),
            cpuOverNoopUs: own.map((r, i) => r.cpuUsPerResponse - (noop[i]?.cpuUsPerResponse ?? Number.NaN)),
          };
        }),
      });
    }
  } finally {
    await Promise.all([...all.values()].map((server) => server.stop()));
  }
  return results;
}

function toRound(variant: HttpVariant, result: LoadResult): HttpRound {
  const cpuMs = result.serverCpuMs;
  const expected = Object.entries(result.statuses)
    .filter(([code]) => (isBlockedVariant(variant) ? code === '429' : code.startsWith('2')))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    ...result,
    cpuUsPerResponse: (cpuMs * 1000) / result.responses,
    serverBusy: cpuMs / (result.seconds * 1000),
    expectedShare: result.responses === 0 ? 0 : expected / result.responses,
  };
}

/** The median over rounds of one figure of a variant. */
export function medianOf(result: HttpVariantResult, pick: (round: HttpRound) => number): number {
  return median(result.rounds.map(pick));
}
