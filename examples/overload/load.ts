/**
 * Starting an overload example server in its own process and driving it with open-loop load: a
 * fixed rate whatever the answers, as users keep arriving whether or not the service keeps up
 * (a closed loop of N clients would slow down with it and hide the queue).
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { Protection } from './app';

/** A running example server. */
export interface ServerProcess {
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts `server.ts <protection> <workMs>` with tsx and waits for its port. */
export function startServer(protection: Protection, workMs = 10): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, 'server.ts'), protection, String(workMs)], {
    cwd: join(__dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${protection} server exited with code ${String(code)} before listening`)));
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

/** Options of {@link drive}. */
export interface DriveOptions {
  /** Requests sent per second, whatever the answers. */
  readonly ratePerSecond: number;
  /** Requests in all. */
  readonly count: number;
  /** Most requests outstanding at once; past it, sending waits (then the load is a closed loop). @defaultValue unbounded */
  readonly maxInFlight?: number;
  /** A request unanswered after this many ms is abandoned (counted as timed out). @defaultValue never */
  readonly timeoutMs?: number;
  /** The path requested. @defaultValue '/report' */
  readonly path?: string;
}

/** What a load run saw. */
export interface LoadReport {
  readonly sent: number;
  /** Answers by status. */
  readonly statuses: Readonly<Record<number, number>>;
  /** Requests abandoned after `timeoutMs`. */
  readonly timedOut: number;
  /** Requests that failed without an answer (connection errors). */
  readonly failed: number;
  /** Latency of each 200 answer, in ms. */
  readonly okLatenciesMs: readonly number[];
  /** From the first request sent to the last answer, in s. */
  readonly seconds: number;
}

/** Sends `count` requests at `ratePerSecond` to 127.0.0.1:`port` and waits for every one to end. */
export function drive(port: number, options: DriveOptions): Promise<LoadReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const statuses: Record<number, number> = {};
  const okLatenciesMs: number[] = [];
  let sent = 0;
  let ended = 0;
  let inFlight = 0;
  let timedOut = 0;
  let failed = 0;
  const started = performance.now();
  let last = started;
  return new Promise((resolve) => {
    const finish = (): void => {
      ended++;
      inFlight--;
      last = performance.now();
      if (ended === options.count) {
        agent.destroy();
        resolve({ sent, statuses, timedOut, failed, okLatenciesMs, seconds: (last - started) / 1000 });
      }
    };
    const send = (): void => {
      sent++;
      inFlight++;
      const at = performance.now();
      let done = false;
      const req = request({ host: '127.0.0.1', port, path: options.path ?? '/report', agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (done) return;
          done = true;
          const status = res.statusCode ?? 0;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 200) okLatenciesMs.push(performance.now() - at);
          finish();
        });
      });
      req.on('error', () => {
        if (done) return;
        done = true;
        failed++;
        finish();
      });
      if (options.timeoutMs !== undefined) {
        req.setTimeout(options.timeoutMs, () => {
          if (done) return;
          done = true;
          timedOut++;
          req.destroy();
          finish();
        });
      }
      req.end();
    };
    const tick = (): void => {
      const due = Math.min(options.count, Math.floor(((performance.now() - started) / 1000) * options.ratePerSecond) + 1);
      while (sent < due && inFlight < (options.maxInFlight ?? Number.POSITIVE_INFINITY)) send();
      if (sent < options.count) setTimeout(tick, 2);
    };
    tick();
  });
}

/**
 * Requests per second the server answers with a few in flight (enough to keep its one thread
 * busy, too few to queue much): its capacity, for a CPU-bound route.
 */
export async function measureCapacity(port: number, requests = 100): Promise<number> {
  await drive(port, { ratePerSecond: 1e9, count: 10, maxInFlight: 4 }); // warm up
  const { seconds } = await drive(port, { ratePerSecond: 1e9, count: requests, maxInFlight: 4 });
  return requests / seconds;
}

/** The `p`-th percentile (0–100) of `values` (0 when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
