import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { HELLO_PATH, USER_COUNT, USER_HEADER } from './http-variant';

/** What one load run measured. */
export interface LoadResult {
  /** Responses per second between the first and the last response (autocannon's own startup excluded). */
  readonly rps: number;
  /** Latency percentiles, in ms. */
  readonly p50: number;
  readonly p99: number;
  /** Responses by status code. */
  readonly statuses: Record<string, number>;
  /** Connection errors and timeouts. */
  readonly errors: number;
  /** Responses in total. */
  readonly responses: number;
  /** From the first response to the last, in s. */
  readonly seconds: number;
  /** The server's CPU time over the same span, in ms (NaN when /proc is not readable). */
  readonly serverCpuMs: number;
}

/** The requests each connection cycles through: one per user, so per-user limits see USER_COUNT keys. */
const REQUESTS = Array.from({ length: USER_COUNT }, (_, i) => ({
  method: 'GET' as const,
  path: HELLO_PATH,
  headers: { [USER_HEADER]: `user-${i}` },
}));

/**
 * One autocannon run against 127.0.0.1:`port`, in this process (the suite pins it to the core
 * the servers do not use). Throughput and the server's CPU are taken from the first response to
 * the end, so autocannon's setup (building its request buffers) is not counted.
 */
export function runLoad(
  port: number,
  seconds: number,
  connections: number,
  pipelining: number,
  serverCpuMs: () => number,
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let first = 0;
    let last = 0;
    let count = 0;
    let cpuAtFirst = Number.NaN;
    const instance = autocannon(
      { url: `http://127.0.0.1:${port}`, connections, pipelining, duration: seconds, requests: REQUESTS },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const cpuAtEnd = serverCpuMs();
        const statuses: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
          statuses[code] = (stat as { count: number }).count;
        const span = (last - first) / 1000;
        resolve({
          rps: count < 2 ? Number.NaN : (count - 1) / span,
          p50: result.latency.p50,
          p99: result.latency.p99,
          statuses,
          errors: result.errors + result.timeouts,
          responses: count,
          seconds: span,
          serverCpuMs: cpuAtEnd - cpuAtFirst,
        });
      },
    );
    instance.on('response', () => {
      last = performance.now();
      if (count++ === 0) {
        first = last;
        cpuAtFirst = serverCpuMs();
      }
    });
  });
}
