/**
 * Cluster checks on Redis: Floodgate's `redisCluster()` against rate-limiter-flexible's
 * `RateLimiterRedis`, on the same Redis, with the same ioredis client settings, in the same
 * run. Every case admits every call (thresholds far above the load), so each call pays its
 * full round trip: a refused call is cheaper in Floodgate (once Redis says a window is full,
 * the instance refuses locally until a bucket leaves it), which would flatter it.
 *
 * For each case: calls per second with 64 calls in flight (closed loop), and the latency of one
 * call (p50/p99) alone (1 in flight) and under that load. A bare `PING` on the same client is
 * the floor: what a Redis round trip costs before any limiter work. Floodgate runs with a 1 s
 * timeout, so that a busy machine does not turn slow answers into fallbacks (which skip Redis);
 * checks that fell back anyway are counted in the table.
 * Floodgate sends the checks of one rule made in one tick as one script call (no leased tokens:
 * the limit is exact), so it is measured both with 64 calls in flight and alone.
 *
 * Redis's own cost per check comes from `INFO commandstats` over the loaded run (reset before
 * it): the microseconds Redis spent in EVALSHA/EVAL (PING for the floor), divided by the checks
 * made, and the script calls per check; and from `INFO cpu`: Redis's CPU time over the loaded run
 * per check (everything the checks cost it, steadier on a busy machine).
 *
 * Run: `npx tsx --conditions=@floodgate/source bench/cluster-redis.ts [--quick]`, with
 * FLOODGATE_REDIS_URL (or REDIS_URL) pointing at a Redis; without one, a throwaway
 * redis-server is started on a free loopback port. Meant to be folded into `npm run bench`
 * through {@link runClusterRedisBench}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Floodgate } from '@floodgate/core';
import { redisCluster } from '@floodgate/redis';
import Redis from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

/** One case's figures. */
export interface ClusterBenchResult {
  readonly name: string;
  /** Calls per second with `concurrency` calls in flight. */
  readonly opsPerSec: number;
  /** Latency of one call with one call in flight, in ms. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Latency of one call with `concurrency` calls in flight, in ms. */
  readonly loadedP50Ms: number;
  readonly loadedP99Ms: number;
  /**
   * Floodgate checks that did not wait for Redis past the backend's timeout (default 20 ms) and
   * fell back to the local rule: they skip the round trip, so a run with many is not a fair one.
   */
  readonly fallbacks: number;
  /** Redis's CPU per check under load, in µs (INFO commandstats: usec of EVALSHA + EVAL + PING / checks). */
  readonly redisUsecPerCheck: number;
  /** Commands Redis ran per check under load (EVALSHA + EVAL + PING calls / checks). */
  readonly redisCallsPerCheck: number;
  /**
   * Redis's CPU per check under load, in µs (INFO cpu: used_cpu_user + used_cpu_sys over the
   * loaded run / checks): what the checks cost Redis in all (reading, parsing, scripts, replies),
   * and steadier than the commandstats figure on a busy machine, which charges a script the time
   * it was preempted.
   */
  readonly redisCpuUsecPerCheck: number;
}

/** Options of {@link runClusterRedisBench}. */
export interface ClusterBenchOptions {
  readonly redisUrl: string;
  /** Measured seconds per case and concurrency. @defaultValue 2 */
  readonly seconds?: number;
  /** Calls in flight for the throughput figure. @defaultValue 64 */
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
}

interface BenchCase {
  readonly name: string;
  /** Sets the case up; returns one call and a cleanup. */
  setup(
    redisUrl: string,
    prefix: string,
  ): Promise<{ call: (i: number) => Promise<unknown>; close: () => Promise<void> }>;
}

const USERS = 1000;
const HUGE = 1e9;
/** Checks that fell back to the local rule (a timeout): they skip Redis, so must be reported. */
let fallbacks = 0;

function client(url: string): Redis {
  return new Redis(url, { enableAutoPipelining: false });
}

async function floodgateCase(
  url: string,
  prefix: string,
  load: (fg: Floodgate) => void,
): Promise<{ fg: Floodgate; close: () => Promise<void> }> {
  const redis = client(url);
  // A generous timeout: on a busy machine a 20 ms one expires now and then, and a check that
  // falls back skips Redis, which would flatter Floodgate. Every check here waits for Redis.
  const backend = redisCluster({ client: redis, prefix, timeoutMs: 1000 });
  await backend.ready();
  const fg = new Floodgate({ cluster: backend });
  fg.on('clusterFallback', () => fallbacks++);
  load(fg);
  return {
    fg,
    close: async () => {
      await backend.close();
      redis.disconnect();
    },
  };
}

const CASES: readonly BenchCase[] = [
  {
    name: 'redis PING (round-trip floor)',
    async setup(url) {
      const redis = client(url);
      await redis.ping();
      return { call: () => redis.ping(), close: async () => redis.disconnect() };
    },
  },
  {
    name: 'floodgate local rule (no Redis)',
    async setup() {
      const fg = new Floodgate();
      fg.loadFlowRules([{ resource: 'api', threshold: HUGE }]);
      return { call: async () => (await fg.enter('api')).exit(), close: async () => undefined };
    },
  },
  {
    name: 'floodgate cluster flow rule (global window)',
    async setup(url, prefix) {
      const { fg, close } = await floodgateCase(url, prefix, (f) =>
        f.loadFlowRules([{ resource: 'api', threshold: HUGE, cluster: { thresholdType: 'global' } }]),
      );
      return { call: async () => (await fg.enter('api')).exit(), close };
    },
  },
  {
    name: 'floodgate cluster flow rule, leaseTokens 100',
    async setup(url, prefix) {
      const { fg, close } = await floodgateCase(url, prefix, (f) =>
        f.loadFlowRules([{ resource: 'api', threshold: HUGE, cluster: { thresholdType: 'global', leaseTokens: 100 } }]),
      );
      return { call: async () => (await fg.enter('api')).exit(), close };
    },
  },
  {
    name: 'rate-limiter-flexible RateLimiterRedis, one key',
    async setup(url, prefix) {
      const redis = client(url);
      await redis.ping();
      const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: prefix, points: HUGE, duration: 1 });
      return { call: () => limiter.consume('api'), close: async () => redis.disconnect() };
    },
  },
  {
    name: 'floodgate cluster hotspot rule, 1000 keys',
    async setup(url, prefix) {
      const { fg, close } = await floodgateCase(url, prefix, (f) =>
        f.loadHotParamRules([
          { resource: 'user', paramIndex: 0, threshold: HUGE, cluster: { thresholdType: 'global' } },
        ]),
      );
      const args = Array.from({ length: USERS }, (_, i) => [`user-${i}`]);
      return { call: async (i) => (await fg.enter('user', { args: args[i % USERS]! })).exit(), close };
    },
  },
  {
    name: 'rate-limiter-flexible RateLimiterRedis, 1000 keys',
    async setup(url, prefix) {
      const redis = client(url);
      await redis.ping();
      const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: prefix, points: HUGE, duration: 1 });
      const keys = Array.from({ length: USERS }, (_, i) => `user-${i}`);
      return { call: (i) => limiter.consume(keys[i % USERS]!), close: async () => redis.disconnect() };
    },
  },
];

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `call` for `seconds` with `concurrency` calls in flight; calls/s and sorted latencies. */
async function closedLoop(
  call: (i: number) => Promise<unknown>,
  seconds: number,
  concurrency: number,
): Promise<{ opsPerSec: number; latencies: Float64Array }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await call(next++);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  return { opsPerSec: latencies.length / elapsed, latencies: Float64Array.from(latencies).sort() };
}

/** Redis's counters for the commands a limiter sends: calls and microseconds, summed. */
async function commandStats(admin: Redis): Promise<{ calls: number; usec: number }> {
  const info = await admin.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval|ping):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[2]);
    usec += Number(match[3]);
  }
  return { calls, usec };
}

/** Redis's CPU time so far (user + system), in µs. */
async function redisCpuUsec(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const read = (field: string): number => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (read('used_cpu_user') + read('used_cpu_sys')) * 1e6;
}

/** Runs every case on the Redis at `redisUrl`; returns their figures in case order. */
export async function runClusterRedisBench(options: ClusterBenchOptions): Promise<ClusterBenchResult[]> {
  const seconds = options.seconds ?? 2;
  const concurrency = options.concurrency ?? 64;
  const log = options.log ?? (() => undefined);
  const results: ClusterBenchResult[] = [];
  const admin = client(options.redisUrl);
  let n = 0;
  for (const bench of CASES) {
    const { call, close } = await bench.setup(options.redisUrl, `floodgate-bench:${process.pid}:${n++}`);
    try {
      log(`${bench.name}: warming up`);
      await closedLoop(call, Math.min(0.5, seconds), concurrency);
      fallbacks = 0;
      const alone = await closedLoop(call, seconds, 1);
      await admin.config('RESETSTAT');
      const cpuBefore = await redisCpuUsec(admin);
      const loaded = await closedLoop(call, seconds, concurrency);
      const cpuAfter = await redisCpuUsec(admin);
      const stats = await commandStats(admin);
      const checks = loaded.latencies.length;
      results.push({
        name: bench.name,
        opsPerSec: loaded.opsPerSec,
        p50Ms: percentile(alone.latencies, 50),
        p99Ms: percentile(alone.latencies, 99),
        loadedP50Ms: percentile(loaded.latencies, 50),
        loadedP99Ms: percentile(loaded.latencies, 99),
        fallbacks,
        // The admin's own INFO is not counted (it is not in the matched commands).
        redisUsecPerCheck: stats.usec / checks,
        redisCallsPerCheck: stats.calls / checks,
        redisCpuUsecPerCheck: (cpuAfter - cpuBefore) / checks,
      });
    } finally {
      await close();
    }
  }
  admin.disconnect();
  return results;
}

/** The results as a Markdown table. */
export function renderClusterRedisBench(results: readonly ClusterBenchResult[], concurrency = 64): string {
  const ms = (v: number): string => v.toFixed(3);
  const lines = [
    `| case | calls/s (${concurrency} in flight) | p50 ms (alone) | p99 ms (alone) | p50 ms (${concurrency} in flight) | p99 ms (${concurrency} in flight) | Redis µs per check | Redis CPU µs per check | Redis calls per check | fallbacks |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.name} | ${Math.round(r.opsPerSec).toLocaleString('en-US')} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${ms(r.loadedP50Ms)} | ${ms(r.loadedP99Ms)} | ${r.redisUsecPerCheck.toFixed(2)} | ${r.redisCpuUsecPerCheck.toFixed(2)} | ${r.redisCallsPerCheck.toFixed(3)} | ${r.fallbacks} |`,
    );
  }
  return lines.join('\n');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A throwaway redis-server on a free loopback port. */
async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    const probe = client(`redis://127.0.0.1:${port}`);
    probe.once('ready', () => {
      probe.disconnect();
      resolve();
    });
  });
  return { url: `redis://127.0.0.1:${port}`, child };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const given = process.env.FLOODGATE_REDIS_URL ?? process.env.REDIS_URL;
  const own = given ? undefined : await startRedis();
  const redisUrl = given ?? own!.url;
  try {
    const results = await runClusterRedisBench({
      redisUrl,
      seconds: quick ? 0.5 : 2,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(`Node ${process.version}, Redis at ${redisUrl}${own ? ' (started for this run)' : ''}\n\n`);
    process.stdout.write(`${renderClusterRedisBench(results)}\n`);
  } finally {
    own?.child.kill();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
