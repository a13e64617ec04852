/**
 * One autocannon run from its own process (pinned to the other core than the server):
 * `node bench/dist/http/load-worker.js <port> <seconds> <connections> <pipelining>`.
 * Cycles through USER_COUNT users (one `x-user-id` each). Prints one JSON line.
 */
import autocannon from 'autocannon';
import { HELLO_PATH, USER_COUNT, USER_HEADER } from './http-variant';

/** What one load run measured. */
export interface LoadResult {
  /** Responses received per second of the run. */
  readonly rps: number;
  /** Latency percentiles, in ms. */
  readonly p50: number;
  readonly p99: number;
  /** Responses by status code. */
  readonly statuses: Record<string, number>;
  /** Connection errors and timeouts. */
  readonly errors: number;
  /** Responses in total, and the run's length in s. */
  readonly responses: number;
  readonly seconds: number;
}

async function main(): Promise<void> {
  const [port, seconds, connections, pipelining] = process.argv.slice(2).map(Number) as [number, number, number, number];
  const requests = Array.from({ length: USER_COUNT }, (_, i) => ({ method: 'GET' as const, path: HELLO_PATH, headers: { [USER_HEADER]: `user-${i}` } }));
  const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections, pipelining, duration: seconds, requests });
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stat as { count: number }).count;
  const responses = Object.values(statuses).reduce((a, b) => a + b, 0);
  const load: LoadResult = {
    rps: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    errors: result.errors + result.timeouts,
    responses,
    seconds: result.duration,
  };
  process.stdout.write(`${JSON.stringify(load)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
