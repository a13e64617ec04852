/**
 * The overload example: the same CPU-bound Express route (app.ts) driven at about twice what it
 * can serve, unguarded, with a system rule and with an adaptive concurrency rule, one fresh server
 * process each. Prints what clients got: answers by status, the p99 latency of the 200s, and the
 * goodput (200s answered within a second, per second). About 20 seconds.
 * Run: `npx tsx --conditions=@floodgate/source examples/overload/main.ts`.
 */
import { performance } from 'node:perf_hooks';
import type { Protection } from './app';
import { measureCapacity, openLoop, percentile, startServer, type OpenLoopResult } from './load';

/** One protection's run. */
export interface OverloadRun {
  readonly protection: Protection;
  readonly report: OpenLoopResult;
  readonly p99Ms: number;
  /** 200 answers per second of the run (every one within the deadline). */
  readonly goodput: number;
}

/** Options of {@link runOverload}. */
export interface RunOverloadOptions {
  /** Seconds of load per protection. @defaultValue 4 */
  readonly seconds?: number;
  /** Load as a multiple of the measured capacity. @defaultValue 2 */
  readonly overload?: number;
  /** Clients give up after this many ms. @defaultValue 1000 */
  readonly deadlineMs?: number;
  /** CPU per request, in ms. @defaultValue 10 */
  readonly workMs?: number;
}

/** Measures the capacity, then drives each protection at `overload` × capacity. */
export async function runOverload(
  options: RunOverloadOptions = {},
): Promise<{ capacity: number; rate: number; runs: OverloadRun[] }> {
  const seconds = options.seconds ?? 4;
  const deadlineMs = options.deadlineMs ?? 1000;
  const workMs = options.workMs ?? 10;
  let capacity = 0;
  const runs: OverloadRun[] = [];
  for (const protection of ['none', 'system', 'adaptive'] as const) {
    const server = await startServer(protection, workMs);
    try {
      if (capacity === 0) capacity = await measureCapacity(server.port, 100);
      const rate = capacity * (options.overload ?? 2);
      const report = await openLoop(server.port, {
        ratePerSecond: rate,
        count: Math.round(rate * seconds),
        deadlineMs,
      });
      runs.push({
        protection,
        report,
        p99Ms: percentile(report.okLatenciesMs, 99),
        goodput: report.okLatenciesMs.length / report.seconds,
      });
    } finally {
      await server.stop();
    }
  }
  return { capacity, rate: capacity * (options.overload ?? 2), runs };
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(
    'Floodgate overload example: one CPU-bound Express route (10 ms of CPU per request), driven at twice its capacity.\n',
  );
  const { capacity, rate, runs } = await runOverload();
  console.log(
    `Capacity measured: ${capacity.toFixed(0)} req/s; load: ${rate.toFixed(0)} req/s for 4 s per run; clients give up after 1 s.\n`,
  );
  const rows = [
    ['protection', 'sent', '200', '503', 'gave up', 'p99 of 200s', 'goodput'],
    ...runs.map(({ protection, report, p99Ms, goodput }) => [
      protection,
      String(report.sent),
      String(report.statuses['200'] ?? 0),
      String(report.statuses['503'] ?? 0),
      String(report.timedOut + report.failed),
      `${p99Ms.toFixed(0)} ms`,
      `${goodput.toFixed(0)} req/s`,
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  for (const row of rows)
    console.log(
      `  ${row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('   ')}`,
    );
  console.log(
    '\nUnguarded, every request waits behind the queue: latency climbs until clients give up and the CPU is spent on answers nobody reads.' +
      "\nWith a system rule (event loop over 80 % busy + Sentinel's BBR check) or an adaptive concurrency rule, the excess gets a fast 503" +
      '\nwith Retry-After, and the requests admitted are served quickly.',
  );
  console.log(`\nDone in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
