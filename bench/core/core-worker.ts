/**
 * One fresh process of the core suite: sets every case up, warms them all (so call sites are
 * as polymorphic as in an application that uses every feature), then measures each case once
 * per pass with mitata, the order reversed on every other pass. Prints one JSON line.
 *
 * Usage: node --expose-gc bench/dist/core/core-worker.js <minCpuMs> <passes> [batchSamples]
 */
import { coreCases } from './core-cases';

/** What one worker process reports per case. */
export interface CoreWorkerCase {
  /** Median time per call of each pass, in ns. */
  readonly p50: number[];
  /** Mean time per call of each pass, in ns. */
  readonly avg: number[];
}

/** The JSON line a worker prints. */
export interface CoreWorkerResult {
  readonly cases: Record<string, CoreWorkerCase>;
  readonly pending: Record<string, string>;
  readonly failed: Record<string, string>;
}

async function main(): Promise<void> {
  const minCpuMs = Number(process.argv[2] ?? 300);
  const passes = Number(process.argv[3] ?? 2);
  // calls per sample: mitata's 4096 by default; fewer keep the slow cases short in quick mode
  const batchSamples = Number(process.argv[4] ?? 4096);
  const { measure } = await import('mitata');
  const result: CoreWorkerResult = { cases: {}, pending: {}, failed: {} };
  const ready: { id: string; fn: () => unknown; async: boolean }[] = [];
  for (const c of coreCases()) {
    if (c.pending !== undefined) {
      result.pending[c.id] = c.pending;
      continue;
    }
    try {
      ready.push({ id: c.id, fn: await c.setup(), async: c.async });
    } catch (error) {
      result.failed[c.id] = error instanceof Error ? error.message : String(error);
    }
  }
  const warmMs = Math.max(20, minCpuMs / 3);
  for (const c of ready) await warm(c.fn, c.async, warmMs);
  for (let pass = 0; pass < passes; pass++) {
    const order = pass % 2 === 0 ? ready : [...ready].reverse();
    for (const c of order) {
      settle();
      const stats = await measure(c.fn, { min_cpu_time: minCpuMs * 1e6, batch_samples: batchSamples });
      const slot = (result.cases[c.id] ??= { p50: [], avg: [] });
      slot.p50.push(stats.p50);
      slot.avg.push(stats.avg);
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** A clean heap before each measurement, when node runs with --expose-gc (the suite does). */
function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function warm(fn: () => unknown, isAsync: boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // Slow cases (a scrape takes milliseconds) look at the time every call.
    if (isAsync) for (let i = 0; i < 1000 && performance.now() < end; i++) await fn();
    else for (let i = 0; i < 10_000; i++) fn();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
