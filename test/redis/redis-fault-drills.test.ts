import Redis from 'ioredis';
import { startRedisServer, type RedisServer } from '../support/test-services';
import type { DrillReport, DrillStatus } from './support/drill-worker';
import { WorkerProcess } from './support/worker-process';

// Five fault drills, each across two processes under concurrent load on one global rule:
// CLIENT PAUSE, SIGSTOP then SIGCONT of redis-server, kill and restart on the same port,
// SCRIPT FLUSH, FLUSHALL. Each asserts on counts and bounds: no call waits past timeoutMs plus a
// small margin, no unhandled rejection and no failed call, at most the local threshold × the
// instances in any window until the instances return to Redis (the fallback bound; the global
// threshold more in a window holding a return), and at most the global threshold in every
// window from 2 s after recovery on (shared limiting again). The only waits poll real I/O.

const THRESHOLD = 20;
const INSTANCES = 2;
const TIMEOUT_MS = 100;
/** What a call may wait past TIMEOUT_MS: the tick it was made in and the deadline timer's sweep. */
const MARGIN_MS = 150;
/** The engine's window: 2 buckets of 500 ms, on the wall clock's grid in both processes. */
const BUCKET_MS = 500;
const RECOVERY_MS = 2000;

let server: RedisServer;
let admin: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  admin.on('error', () => undefined);
});
afterAll(async () => {
  admin.disconnect();
  await server.stop();
});
afterEach(async () => {
  server.thaw();
  if (admin.status === 'ready') await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
});

/** Polls `condition` (real I/O with the workers or Redis) every 20 ms, for up to 20 s. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`fault drill: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Passes per window of 2 buckets (`[k × 500, k × 500 + 1000)`), by the window's start. */
function windows(passes: readonly number[]): Map<number, number> {
  const perBucket = new Map<number, number>();
  for (const at of passes) {
    const bucket = Math.floor(at / BUCKET_MS);
    perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + 1);
  }
  const result = new Map<number, number>();
  for (const bucket of perBucket.keys()) {
    for (const start of [bucket - 1, bucket])
      result.set(start * BUCKET_MS, (perBucket.get(start) ?? 0) + (perBucket.get(start + 1) ?? 0));
  }
  return result;
}

interface Drill {
  /** Breaks Redis. */
  readonly fault: () => Promise<void>;
  /** Mends it. */
  readonly recover: () => Promise<void>;
  /** Whether the instances must have fallen back before recovery (not for an instant fault). */
  readonly fallsBack: boolean;
}

/**
 * Runs a drill: two instances under load; once Redis shares the limit, `fault`; hold it until
 * both fell back and passed more than one window's worth locally; `recover`; keep the load until
 * both answer from Redis again and a full window more than 2 s after recovery has been counted.
 */
async function drill({
  fault,
  recover,
  fallsBack,
}: Drill): Promise<{ reports: DrillReport[]; faultAt: number; recoveredAt: number }> {
  const prefix = `fg-test:drill:${process.pid}:${n++}`;
  const env = {
    FG_REDIS_URL: server.url,
    FG_PREFIX: prefix,
    FG_THRESHOLD: String(THRESHOLD),
    FG_TIMEOUT_MS: String(TIMEOUT_MS),
    FG_COOL_DOWN_MS: '200',
    FG_CONCURRENCY: '8',
  };
  const workers = [new WorkerProcess('drill-worker.ts', env), new WorkerProcess('drill-worker.ts', env)];
  try {
    for (const worker of workers) expect(await worker.nextLine()).toBe('ready');
    for (const worker of workers) worker.send('go');
    const key = `${prefix}:w:{flow|api|reject|default#0}`;
    // Redis shares the limit: its window is full.
    await until(async () => {
      const counts = await admin.hmget(key, 'c0', 'c1');
      return counts.reduce((sum, c) => sum + Number(c ?? 0), 0) >= THRESHOLD;
    }, 'Redis to fill the shared window');
    const faultAt = Date.now();
    await fault();
    if (fallsBack) {
      await until(async () => {
        const statuses = await Promise.all(workers.map((w) => w.request<DrillStatus>('status')));
        return statuses.every((s) => s.fallbacks > 0 && s.passesInFallback > THRESHOLD);
      }, 'both instances to fall back and pass more than one window locally');
    }
    await recover();
    const recoveredAt = Date.now();
    await until(async () => {
      const statuses = await Promise.all(workers.map((w) => w.request<DrillStatus>('status')));
      return statuses.every(
        (s) => (!fallsBack || s.recoveries > 0) && s.latestCallAt >= recoveredAt + RECOVERY_MS + 2 * BUCKET_MS,
      );
    }, 'both instances to recover and run a full window past the 2 s mark');
    const reports = await Promise.all(workers.map((w) => w.request<DrillReport>('stop')));
    return { reports, faultAt, recoveredAt };
  } finally {
    for (const worker of workers) worker.kill();
  }
}

/**
 * The assertions every drill makes. Windows are the engine's (2 buckets of 500 ms on the wall
 * clock's grid), counted from every pass of both instances, by when the engine admitted it.
 */
function expectSafe({
  reports,
  faultAt,
  recoveredAt,
}: {
  reports: DrillReport[];
  faultAt: number;
  recoveredAt: number;
}): void {
  expect(reports.map((r) => r.failures)).toEqual([[], []]);
  expect(reports.map((r) => r.unhandledRejections)).toEqual([0, 0]);
  // No call waits past its timeout plus the margin, beyond what the machine held the process up.
  for (const r of reports) expect(r.slowestMs).toBeLessThan(TIMEOUT_MS + MARGIN_MS + r.maxLoopDelayMs);
  const all = windows(reports.flatMap((r) => r.passes));
  /** Windows within [from, to) holding more than `limit` passes, as [ms from the fault, passes]. */
  const over = (limit: number, from: number, to: number): [number, number][] =>
    [...all]
      .filter(([start, count]) => start >= from && start + 2 * BUCKET_MS <= to && count > limit)
      .map(([start, count]) => [start - faultAt, count]);
  const backAt = Math.min(...reports.map((r) => r.firstRecoveryAt || recoveredAt));
  const lastPass = Math.max(...reports.flatMap((r) => r.passes));
  // Shared limiting before the fault.
  expect(over(THRESHOLD, 0, faultAt - 2 * BUCKET_MS)).toEqual([]);
  // The fallback bound, up to the first instance back on Redis: each instance's local rule
  // passes at most THRESHOLD per window, what it passed through Redis in that window included.
  expect(over(THRESHOLD * INSTANCES, 0, backAt)).toEqual([]);
  // Switching back: Redis never saw the local passes, so a window holding a return to Redis may
  // add the global threshold to them, and no more.
  expect(over(THRESHOLD * INSTANCES + THRESHOLD, 0, Number.POSITIVE_INFINITY)).toEqual([]);
  // Shared limiting again from 2 s after recovery, and in use then.
  expect(over(THRESHOLD, recoveredAt + RECOVERY_MS, lastPass - 2 * BUCKET_MS)).toEqual([]);
  expect([...all].some(([start, count]) => start >= recoveredAt + RECOVERY_MS && count > 0)).toBe(true);
}

describe('fault drills: two processes under load', () => {
  it('holds its bounds through CLIENT PAUSE', async () => {
    expectSafe(
      await drill({
        // WRITE: scripts (which write) wait, and the admin's UNPAUSE still runs.
        fault: async () => void (await admin.call('CLIENT', 'PAUSE', '30000', 'WRITE')),
        recover: async () => void (await admin.call('CLIENT', 'UNPAUSE')),
        fallsBack: true,
      }),
    );
  }, 60_000);

  it('holds its bounds through SIGSTOP then SIGCONT of redis-server', async () => {
    expectSafe(
      await drill({ fault: async () => server.freeze(), recover: async () => server.thaw(), fallsBack: true }),
    );
  }, 60_000);

  it('holds its bounds through a kill and a restart on the same port', async () => {
    expectSafe(
      await drill({
        fault: () => server.kill(),
        recover: async () => {
          await server.restart();
          await until(async () => (await admin.ping().catch(() => '')) === 'PONG', 'the admin connection');
        },
        fallsBack: true,
      }),
    );
  }, 60_000);

  it('holds its bounds through SCRIPT FLUSH', async () => {
    expectSafe(
      await drill({
        fault: async () => void (await admin.script('FLUSH')),
        recover: async () => undefined,
        fallsBack: false,
      }),
    );
  }, 60_000);

  it('holds its bounds through FLUSHALL', async () => {
    expectSafe(
      await drill({
        fault: async () => void (await admin.flushall()),
        recover: async () => undefined,
        fallsBack: false,
      }),
    );
  }, 60_000);
});
