/**
 * One load run of the gRPC bench in a fresh process:
 * `node bench/dist/grpc/grpc-client-worker.js <port> <client variant> <seconds> <callsPerSec> <serverPid>`.
 * Starts unary calls at a fixed rate (open loop, in 5 ms ticks; each caller one of the bench's
 * users), one second unrecorded first (JIT warm-up), then `seconds` measured, and prints one JSON
 * line: the calls completed, and the CPU time per call of this process (the client) and of the
 * server. At a fixed rate every variant's calls arrive alike, so the per-call CPU of two variants
 * differs by what they do per call, not by how calls happen to batch.
 */
import * as grpc from '@grpc/grpc-js';
import { processRunMs } from '../http/process-cpu';
import { BENCH_USERS, echoClient, say } from './echo-service';
import { GRPC_VARIANTS, type GrpcVariant } from './grpc-variant';

/** What one load run measured. */
export interface GrpcLoadResult {
  readonly calls: number;
  readonly seconds: number;
  readonly callsPerSec: number;
  /** Calls not started because too many were in flight (the rate was more than the pair could take). */
  readonly skipped: number;
  /** CPU time of the client process per call, in µs. */
  readonly clientCpuUsPerCall: number;
  /** CPU time of the server process per call, in µs (NaN without /proc). */
  readonly serverCpuUsPerCall: number;
}

const TICK_MS = 5;
/** Most calls in flight; a tick past it starts none (counted in `skipped`). */
const MAX_IN_FLIGHT = 512;

async function main(): Promise<void> {
  const [port, variant, seconds, rate, serverPid] = process.argv.slice(2);
  if (!GRPC_VARIANTS.includes(variant as GrpcVariant) || serverPid === undefined)
    throw new Error(
      `usage: grpc-client-worker <port> <${GRPC_VARIANTS.join('|')}> <seconds> <callsPerSec> <serverPid>`,
    );
  const client = echoClient(`127.0.0.1:${port}`, variant as GrpcVariant);
  const metadata = Array.from({ length: BENCH_USERS }, (_, i) => {
    const m = new grpc.Metadata();
    m.set('x-user-id', `user-${i}`);
    return m;
  });
  let done = 0;
  let inFlight = 0;
  let skipped = 0;
  let next = 0;
  let owed = 0;
  const perTick = (Number(rate) * TICK_MS) / 1000;
  const ticker = setInterval(() => {
    owed += perTick;
    for (; owed >= 1; owed--) {
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
        continue;
      }
      inFlight++;
      say(client, metadata[next++ % BENCH_USERS]!).then(
        () => {
          inFlight--;
          done++;
        },
        (error: unknown) => {
          throw error;
        },
      );
    }
  }, TICK_MS);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const startDone = done;
  const startSkipped = skipped;
  const startWall = process.hrtime.bigint();
  const startCpu = process.cpuUsage();
  const startServer = processRunMs(Number(serverPid));
  await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1000));
  const calls = done - startDone;
  const cpu = process.cpuUsage(startCpu);
  const serverMs = processRunMs(Number(serverPid)) - startServer;
  const wall = Number(process.hrtime.bigint() - startWall) / 1e9;
  clearInterval(ticker);
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  client.close();
  const result: GrpcLoadResult = {
    calls,
    seconds: wall,
    callsPerSec: calls / wall,
    skipped: skipped - startSkipped,
    clientCpuUsPerCall: (cpu.user + cpu.system) / calls,
    serverCpuUsPerCall: (serverMs * 1000) / calls,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
