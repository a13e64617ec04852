/**
 * Running an overload example server in its own process (the load must not share its one
 * JavaScript thread) and measuring its capacity. The load itself is the benchmark's open-loop
 * driver (bench/overload/open-loop.ts): a fixed rate whatever the answers, as users keep arriving
 * whether or not the service keeps up.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openLoop } from '../../bench/overload/open-loop';
import type { Protection } from './app';

export { openLoop, percentile, type OpenLoopOptions, type OpenLoopResult } from '../../bench/overload/open-loop';

/** A running example server. */
export interface ServerProcess {
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts `server.ts <protection> <workMs>` with tsx and waits for its port. */
export function startServer(protection: Protection, workMs = 10): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, 'server.ts'), protection, String(workMs)],
    {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`the ${protection} server exited with code ${String(code)} before listening`)),
    );
    createInterface({ input: child.stdout! }).once('line', (line) => {
      child.removeAllListeners('exit');
      const { port } = JSON.parse(line) as { port: number };
      const stop = (): Promise<void> =>
        new Promise((done) => {
          if (child.exitCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        });
      resolve({ port, stop });
    });
  });
}

/**
 * 200s per second the server answers with a few requests in flight (enough to keep its one
 * thread busy, too few to queue much): its capacity, for a CPU-bound route. Measure it on an
 * unguarded server (a guarded one may answer some with 503).
 */
export async function measureCapacity(port: number, requests = 200): Promise<number> {
  await openLoop(port, { ratePerSecond: 1e9, count: 20, maxInFlight: 4 }); // warm-up
  const { okLatenciesMs, seconds } = await openLoop(port, { ratePerSecond: 1e9, count: requests, maxInFlight: 4 });
  return okLatenciesMs.length / seconds;
}
