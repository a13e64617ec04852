import { join } from 'node:path';
import { median } from '../lib/median';
import { runJsonWorker } from '../lib/run-json-worker';
import { waitUntilIdle } from '../http/process-cpu';
import { startListeningProcess, type ServerProcess } from '../http/server-process';
import type { GrpcLoadResult } from './grpc-client-worker';
import type { InterceptorCost } from './interceptor-cost';
import { GRPC_VARIANTS, type GrpcVariant } from './grpc-variant';

/** How the gRPC suite runs. */
export interface GrpcSuiteSettings {
  /** Interleaved rounds (every variant once per round, reversed on odd rounds). */
  readonly rounds: number;
  /** Measured seconds per load run (after one unrecorded second in the same process). */
  readonly seconds: number;
  /** Calls per batch of the in-process measurement. */
  readonly inProcessCalls: number;
  /** Unary calls started per second (open loop: the same for every variant). */
  readonly callsPerSec: number;
  /** Core for the servers; the load (client) processes get the other one. */
  readonly serverCore: number;
  readonly loadCore: number;
  readonly log: (line: string) => void;
}

/** One variant across the rounds, and its figure over bare's of the same round. */
export interface GrpcVariantResult {
  readonly variant: GrpcVariant;
  readonly runs: GrpcLoadResult[];
  /** Per round, CPU µs per call minus bare's of the same round (server CPU for server variants, client CPU for client ones). */
  readonly overBareUs: number[];
}

/** What the gRPC suite measured. */
export interface GrpcSuiteResult {
  /** Each server variant, loaded by a bare client: the server's CPU per call. */
  readonly server: GrpcVariantResult[];
  /** Each client variant, against the bare server: the client's CPU per call. */
  readonly client: GrpcVariantResult[];
  /** The interceptors' own cost, in-process without a network (bench/grpc/interceptor-cost.ts), one per fresh process. */
  readonly inProcess: InterceptorCost[];
}

/**
 * Starts one server process per variant (bare grpc-js, a pass-through interceptor, Floodgate's
 * interceptor), each pinned to the server core once listening; then, in interleaved rounds, loads
 * each with a bare client (a fresh process pinned to the other core) to measure the server's CPU
 * per unary call, and loads the bare server with each client variant to measure the client's.
 * The load is open loop at one rate for every variant, below what a grpc-js client on one core can
 * send (a call costs the client about three times what it costs the server), so calls arrive alike
 * and per-call CPU differs by what each variant does. Per-call CPU is the processes' own CPU time,
 * so a busy machine stretches wall time more than the figures; differences are taken within a
 * round, then the median over rounds.
 */
export async function runGrpcSuite(distDir: string, settings: GrpcSuiteSettings): Promise<GrpcSuiteResult> {
  const servers = new Map<GrpcVariant, ServerProcess>();
  const worker = join(distDir, 'grpc', 'grpc-client-worker.js');
  const load = async (server: GrpcVariant, client: GrpcVariant, seconds: number): Promise<GrpcLoadResult> => {
    const target = servers.get(server)!;
    const result = await runJsonWorker<GrpcLoadResult>(
      worker,
      [String(target.port), client, String(seconds), String(settings.callsPerSec), String(target.pid)],
      { core: settings.loadCore },
    );
    await waitUntilIdle(target.pid);
    return result;
  };
  try {
    for (const variant of GRPC_VARIANTS)
      servers.set(
        variant,
        await startListeningProcess(join(distDir, 'grpc', 'grpc-server-worker.js'), [variant], settings.serverCore),
      );
    settings.log(`  ${servers.size} gRPC servers listening; warming each`);
    for (const variant of GRPC_VARIANTS) await load(variant, 'bare', 1);
    const serverRuns = new Map<GrpcVariant, GrpcLoadResult[]>(GRPC_VARIANTS.map((v) => [v, []]));
    const clientRuns = new Map<GrpcVariant, GrpcLoadResult[]>(GRPC_VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? [...GRPC_VARIANTS] : [...GRPC_VARIANTS].reverse();
      settings.log(`  gRPC round ${round + 1}/${settings.rounds}: ${order.join(', ')}`);
      for (const variant of order) serverRuns.get(variant)!.push(await load(variant, 'bare', settings.seconds));
      for (const variant of order) clientRuns.get(variant)!.push(await load('bare', variant, settings.seconds));
    }
    const results = (
      runs: Map<GrpcVariant, GrpcLoadResult[]>,
      cpu: (run: GrpcLoadResult) => number,
    ): GrpcVariantResult[] =>
      GRPC_VARIANTS.map((variant) => ({
        variant,
        runs: runs.get(variant)!,
        overBareUs: runs.get(variant)!.map((run, i) => cpu(run) - cpu(runs.get('bare')![i]!)),
      }));
    const inProcess: InterceptorCost[] = [];
    for (let i = 0; i < settings.rounds; i++) {
      settings.log(`  gRPC interceptors in-process: process ${i + 1}/${settings.rounds}`);
      inProcess.push(
        await runJsonWorker<InterceptorCost>(
          join(distDir, 'grpc', 'interceptor-cost.js'),
          [String(settings.inProcessCalls)],
          { core: settings.loadCore },
        ),
      );
    }
    return {
      server: results(serverRuns, (run) => run.serverCpuUsPerCall),
      client: results(clientRuns, (run) => run.clientCpuUsPerCall),
      inProcess,
    };
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  }
}

/** The median of a figure over a variant's runs. */
export function grpcMedian(result: GrpcVariantResult, pick: (run: GrpcLoadResult) => number): number {
  return median(result.runs.map(pick));
}
