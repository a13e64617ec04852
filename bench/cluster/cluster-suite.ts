import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import type { ClusterBenchResult } from '../cluster-redis';
import { median } from '../lib/median';
import { pinProcess } from '../lib/pinned-command';
import { runJsonWorker } from '../lib/run-json-worker';

/** How the cluster suite runs. */
export interface ClusterSuiteSettings {
  /** Fresh worker processes; each runs every case once. */
  readonly processes: number;
  /** Measured seconds per case and concurrency (bench/cluster-redis.ts's `seconds`). */
  readonly seconds: number;
  /** Core for redis-server (when this suite starts it) and for the workers. */
  readonly serverCore: number;
  readonly clientCore: number;
  readonly log: (line: string) => void;
}

/** One case: the median over processes of each figure, and every process's figures. */
export interface ClusterCaseResult extends Pick<
  ClusterBenchResult,
  'name' | 'opsPerSec' | 'p50Ms' | 'p99Ms' | 'loadedP50Ms' | 'loadedP99Ms'
> {
  readonly runs: ClusterBenchResult[];
}

/** What the cluster suite measured, and against which Redis. */
export interface ClusterSuiteResult {
  readonly redis: string;
  readonly cases: ClusterCaseResult[];
}

/** What to do when there is no Redis to measure against (said before any suite runs, and if it fails to start). */
const NO_REDIS_HINT =
  '`npm run test:services` installs redis-server (as `npm test` does), FLOODGATE_REDIS_URL names a running Redis, ' +
  'or `--only` leaves the cluster suite out';

/**
 * Why the cluster suite cannot run, checked before the bench measures anything (so a missing
 * redis-server stops a full run at its start, not after ten minutes of other suites); `undefined`
 * when a Redis URL is given in `env` or `redis-server` runs on its PATH.
 */
export function clusterSuiteProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if ((env.FLOODGATE_REDIS_URL ?? env.REDIS_URL) !== undefined) return undefined;
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore', env });
  if (probe.error === undefined && probe.status === 0) return undefined;
  const why = probe.error?.message ?? `redis-server --version exited with ${String(probe.status ?? probe.signal)}`;
  return `the cluster suite needs a Redis, and redis-server cannot run here (${why}): ${NO_REDIS_HINT}`;
}

/**
 * Runs bench/cluster-redis.ts's cases in `processes` fresh processes against one Redis: the one
 * in FLOODGATE_REDIS_URL (or REDIS_URL), else a throwaway `redis-server` started here on a free
 * loopback port and pinned to the server core. Medians over processes.
 */
export async function runClusterSuite(distDir: string, settings: ClusterSuiteSettings): Promise<ClusterSuiteResult> {
  const given = process.env.FLOODGATE_REDIS_URL ?? process.env.REDIS_URL;
  const own = given === undefined ? await startRedis(settings.serverCore) : undefined;
  const redisUrl = given ?? own!.url;
  try {
    const runs: ClusterBenchResult[][] = [];
    for (let i = 0; i < settings.processes; i++) {
      settings.log(`  cluster: process ${i + 1}/${settings.processes}`);
      runs.push(
        await runJsonWorker<ClusterBenchResult[]>(
          join(distDir, 'cluster', 'cluster-worker.js'),
          [redisUrl, String(settings.seconds)],
          { core: settings.clientCore },
        ),
      );
    }
    const cases = runs[0]!.map((first, i) => {
      const all = runs.map((run) => run[i]!);
      const med = (pick: (r: ClusterBenchResult) => number): number => median(all.map(pick));
      return {
        name: first.name,
        opsPerSec: med((r) => r.opsPerSec),
        p50Ms: med((r) => r.p50Ms),
        p99Ms: med((r) => r.p99Ms),
        loadedP50Ms: med((r) => r.loadedP50Ms),
        loadedP99Ms: med((r) => r.loadedP99Ms),
        runs: all,
      };
    });
    return {
      redis: own === undefined ? 'FLOODGATE_REDIS_URL' : `redis-server ${own.version} started for the run`,
      cases,
    };
  } finally {
    own?.child.kill();
  }
}

async function startRedis(core: number): Promise<{ url: string; child: ChildProcess; version: string }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`cannot start redis-server (${error.message}): ${NO_REDIS_HINT}`)));
    child.once('spawn', () => resolve());
  });
  pinProcess(child.pid!, core);
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // a refused connection while redis-server starts is expected
    try {
      await probe.connect();
      const info = await probe.info('server');
      return { url, child, version: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown' };
    } catch (error) {
      if (attempt >= 50) {
        child.kill();
        throw new Error(
          `redis-server on port ${port} did not answer within 5 s: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      probe.disconnect();
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no free port')),
      );
    });
  });
}
