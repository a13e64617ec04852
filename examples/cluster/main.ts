/**
 * Cluster mode: two processes share one limit and one circuit breaker through Redis. Each gets a
 * burst of quote requests at the same moment; together they serve exactly QUOTES_PER_SECOND,
 * however the burst splits. Then each sees its rates upstream fail six times: too few for a
 * breaker of its own (minRequestAmount 10), but the shared breaker counts both, opens, and both
 * processes answer 503 from then on.
 * It needs a Redis, at REDIS_URL (default redis://127.0.0.1:6379), and exits at once saying so
 * when none answers there. Run: `npx tsx --conditions=@floodgate/source examples/cluster/main.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Redis from 'ioredis';
import { QUOTES_PER_SECOND, RATES_BREAKER } from './instance';

/** What one process answered. */
export interface ProcessReport {
  readonly pid: number;
  readonly served: number;
  readonly limited: number;
  /** Checks decided without Redis. */
  readonly fallbacks: number;
  /** The shared rates breaker as this process saw it after both processes' failures. */
  readonly breaker: {
    readonly state: string;
    /** Its transitions, `from->to`, as announced in this process. */
    readonly changes: readonly string[];
    /** The answer to one more rates request. */
    readonly next: string;
  };
}

/** Options of {@link runCluster}. */
export interface RunClusterOptions {
  readonly redisUrl: string;
  /** Requests per process. @defaultValue 15 */
  readonly requestsEach?: number;
  /** Failed upstream calls per process. @defaultValue 6 */
  readonly failuresEach?: number;
  /** Key prefix. @defaultValue a fresh one per run */
  readonly prefix?: string;
  /** Pins the shared time (tests); by default Redis's own clock. */
  readonly now?: number;
}

const ROOT = join(__dirname, '..', '..');

function startProcess(env: Record<string, string>): { child: ChildProcess; next: () => Promise<string> } {
  const child = spawn(
    process.execPath,
    ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, 'worker.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<string>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`worker exited with code ${code}`))),
  );
  exited.catch(() => undefined);
  const next = (): Promise<string> => {
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), exited]);
  };
  return { child, next };
}

/** Starts two processes on one Redis, gives each a burst at the same moment, returns their reports. */
export async function runCluster(options: RunClusterOptions): Promise<ProcessReport[]> {
  const env: Record<string, string> = {
    FG_REDIS_URL: options.redisUrl,
    FG_PREFIX: options.prefix ?? `floodgate-example:${process.pid}:${Date.now()}`,
    FG_REQUESTS: String(options.requestsEach ?? 15),
    FG_FAILURES: String(options.failuresEach ?? 6),
    ...(options.now !== undefined ? { FG_NOW: String(options.now) } : {}),
  };
  const processes = [startProcess(env), startProcess(env)];
  try {
    for (const p of processes) {
      const line = await p.next();
      if (line !== 'ready') throw new Error(`unexpected worker output: ${line}`);
    }
    const ask = async (command: string): Promise<string[]> => {
      for (const p of processes) p.child.stdin!.write(`${command}\n`);
      return Promise.all(processes.map((p) => p.next()));
    };
    const quotes = (await ask('go')).map((line) => JSON.parse(line) as Omit<ProcessReport, 'breaker'>);
    for (const line of await ask('fail')) if (line !== 'failed') throw new Error(`unexpected worker output: ${line}`);
    const breakers = (await ask('state')).map((line) => JSON.parse(line) as ProcessReport['breaker']);
    return quotes.map((report, i) => ({ ...report, breaker: breakers[i]! }));
  } finally {
    for (const p of processes) if (p.child.exitCode === null) p.child.kill();
  }
}

/** Resolves to undefined when a Redis answers PING at `url` (within 2 s), else to why not. */
export async function redisProblem(url: string): Promise<string | undefined> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    disconnectTimeout: 50,
  });
  let cause: string | undefined;
  client.on('error', (error: Error) => (cause ??= error.message));
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return cause ?? String(error);
  } finally {
    client.disconnect();
  }
}

async function main(redisUrl: string): Promise<void> {
  const problem = await redisProblem(redisUrl);
  if (problem !== undefined) {
    console.error(
      `examples/cluster needs a Redis: none answers at ${redisUrl} (${problem}).\n` +
        'Start one (apt-get install -y redis-server, then redis-server) or set REDIS_URL to yours, and run it again.',
    );
    process.exit(1);
  }
  console.log(
    `examples/cluster: two processes, one limit of ${QUOTES_PER_SECOND} quotes per second, through the Redis at ${redisUrl}`,
  );
  const failuresEach = 6;
  const reports = await runCluster({ redisUrl, failuresEach });
  for (const r of reports) console.log(`process ${r.pid}: served ${r.served}, answered 429 to ${r.limited}`);
  const served = reports.reduce((sum, r) => sum + r.served, 0);
  console.log(`together: served ${served}, the fleet-wide limit being ${QUOTES_PER_SECOND} per second`);
  for (const r of reports) {
    console.log(
      `process ${r.pid}: rates breaker ${r.breaker.state} (${r.breaker.changes.join(', ')}), next rates request answered ${r.breaker.next}`,
    );
  }
  console.log(
    `each process saw ${failuresEach} failures, under the breaker's minRequestAmount (${RATES_BREAKER.minRequestAmount}); the shared breaker counted both`,
  );
}

if (require.main === module) {
  main(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
