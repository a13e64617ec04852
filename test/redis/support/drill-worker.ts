/**
 * One instance under load for the fault drills, as a separate process: an engine on the shared
 * Redis with one global rule, making calls from `FG_CONCURRENCY` loops from `go` to `stop`.
 *
 * Time is the wall clock (`Date.now()`, the same in every process on the machine), read once per
 * turn of the event loop: the engine's windows, the time sent to Redis and the time each pass is
 * recorded under are then one and the same, so the test can count passes per window exactly.
 *
 * Protocol on stdin/stdout, one line each: prints `ready`; on `go` starts the load; on `status`
 * prints a JSON {@link DrillStatus}; on `stop` stops the load and prints a JSON {@link DrillReport}.
 */
import { performance } from 'node:perf_hooks';
import { watchLoopDelay } from '../../support/loop-delay';
import { createInterface } from 'node:readline';
import { Floodgate, isBlockError } from '@floodgate/core';
import type { Clock } from '@floodgate/core/testing';
import { redisCluster } from '@floodgate/redis';
import Redis from 'ioredis';

/** What `status` answers. */
export interface DrillStatus {
  readonly calls: number;
  /** Checks decided without Redis (clusterFallback events). */
  readonly fallbacks: number;
  /** clusterRecover events. */
  readonly recoveries: number;
  /** When the first clusterRecover came (wall-clock ms; 0: none yet). */
  readonly firstRecoveryAt: number;
  /** Passes decided while this instance was falling back (between a fallback and a recovery). */
  readonly passesInFallback: number;
  /** The start time of the latest call made. */
  readonly latestCallAt: number;
}

/** What `stop` answers. */
export interface DrillReport extends DrillStatus {
  /** When the engine admitted each pass (`entry.createdAt`), in wall-clock ms. */
  readonly passes: number[];
  /** The longest a call waited for its decision, in real ms. */
  readonly slowestMs: number;
  /**
   * The longest this process's event loop was held up (p100 of monitorEventLoopDelay), in ms: a
   * wait that long is the machine's, not the engine's (a loaded CI box delays every timer).
   */
  readonly maxLoopDelayMs: number;
  /** Calls that failed with something other than a block. */
  readonly failures: string[];
  readonly unhandledRejections: number;
}

let unhandled = 0;
process.on('unhandledRejection', () => {
  unhandled++;
});

let cachedNow: number | undefined;
/** Date.now(), the same for everything done in one turn of the event loop. */
function now(): number {
  if (cachedNow === undefined) {
    cachedNow = Date.now();
    setImmediate(() => {
      cachedNow = undefined;
    });
  }
  return cachedNow;
}

const clock: Clock = {
  now,
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    }),
};

async function main(): Promise<void> {
  const env = process.env;
  const client = new Redis(env.FG_REDIS_URL!, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on('error', () => undefined);
  const backend = redisCluster({
    client,
    prefix: env.FG_PREFIX!,
    now,
    timeoutMs: Number(env.FG_TIMEOUT_MS),
    failureThreshold: 3,
    coolDownMs: Number(env.FG_COOL_DOWN_MS),
    onError: () => undefined,
  });
  await backend.ready();
  const fg = new Floodgate({ clock, cluster: backend });
  fg.loadFlowRules([{ resource: 'api', threshold: Number(env.FG_THRESHOLD), cluster: { thresholdType: 'global' } }]);

  let calls = 0;
  let fallbacks = 0;
  let recoveries = 0;
  let firstRecoveryAt = 0;
  let fallingBack = false;
  let passesInFallback = 0;
  let latestCallAt = 0;
  let slowestMs = 0;
  const loopDelay = watchLoopDelay();
  const passes: number[] = [];
  const failures: string[] = [];
  fg.on('clusterFallback', () => {
    fallbacks++;
    fallingBack = true;
  });
  fg.on('clusterRecover', () => {
    if (recoveries === 0) firstRecoveryAt = Date.now();
    recoveries++;
    fallingBack = false;
  });

  let running = false;
  const loops: Promise<void>[] = [];
  const loop = async (): Promise<void> => {
    while (running) {
      const at = now();
      latestCallAt = at;
      const started = performance.now();
      try {
        await fg.run('api', (entry) => {
          // When the engine admitted it, on the clock its windows (and Redis's) count in.
          passes.push(entry.createdAt);
          if (fallingBack) passesInFallback++;
        });
      } catch (error) {
        if (!isBlockError(error)) failures.push(String(error));
      }
      slowestMs = Math.max(slowestMs, performance.now() - started);
      calls++;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const status = (): DrillStatus => ({ calls, fallbacks, recoveries, firstRecoveryAt, passesInFallback, latestCallAt });

  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'go') {
      running = true;
      for (let i = 0; i < Number(env.FG_CONCURRENCY); i++) loops.push(loop());
    } else if (line === 'status') {
      process.stdout.write(`${JSON.stringify(status())}\n`);
    } else if (line === 'stop') {
      running = false;
      await Promise.all(loops);
      loopDelay.stop();
      const maxLoopDelayMs = loopDelay.maxMs();
      const report: DrillReport = {
        ...status(),
        passes,
        slowestMs,
        maxLoopDelayMs,
        failures: failures.slice(0, 5),
        unhandledRejections: unhandled,
      };
      process.stdout.write(`${JSON.stringify(report)}\n`);
      break;
    }
  }
  await backend.close();
  client.disconnect();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
