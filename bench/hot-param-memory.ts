/**
 * Heap growth of per-value limits under a flood of distinct values: a Floodgate QPS hotspot
 * rule (default capacity) against rate-limiter-flexible's RateLimiterMemory, fed the same keys
 * (`user-0`, `user-1`, ...). Each subject runs in a fresh child process; the heap is read after
 * two full GCs at checkpoints, including the moment the hotspot rule's LRU is full.
 *
 * Run (from the repository root):
 *   npx tsx --expose-gc --conditions=@floodgate/source bench/hot-param-memory.ts [values] [durationMs]
 *   node --expose-gc --conditions=@floodgate/source -r tsx/cjs bench/hot-param-memory.ts [values] [durationMs]
 * `values` defaults to 1,000,000; `durationMs` (the hotspot rule's, default 1000) sets the
 * default capacity: min(4000 × ⌈durationMs / 1000⌉, 200000). `--conditions=@floodgate/source`
 * makes `@floodgate/core` resolve to the sources rather than a possibly stale `dist`.
 *
 * Expect the Floodgate heap to stop growing once the LRU has cycled once (by 2 × capacity
 * values: the LRU's key map settles its hash table size under churn), while
 * RateLimiterMemory keeps every key until it expires.
 *
 * This is a benchmark, not a test: it prints figures and asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { Floodgate, isBlockError } from '@floodgate/core';
import { normalizeRuleSet, type HotParamRuleOptions } from '@floodgate/core/rules';
import { RateLimiterMemory } from 'rate-limiter-flexible';

type Subject = 'floodgate' | 'rlf';

/** The hotspot rule under test: 10 calls per duration per value, default capacity. */
function ruleOf(durationMs: number): HotParamRuleOptions {
  return { resource: 'getProfile', paramIndex: 0, threshold: 10, durationMs };
}

/** One heap reading, after two full GCs. */
interface HeapPoint {
  readonly values: number;
  /** `process.memoryUsage().heapUsed`, bytes. */
  readonly heapUsed: number;
  /** `process.memoryUsage().arrayBuffers` (typed arrays live outside the JS heap), bytes. */
  readonly arrayBuffers: number;
}

/** What a child process prints, as one JSON line. */
interface SubjectResult {
  readonly subject: Subject;
  readonly points: HeapPoint[];
  readonly nsPerValue: number;
}

const MB = 1024 * 1024;

function readHeap(values: number): HeapPoint {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  gc();
  gc();
  const usage = process.memoryUsage();
  return { values, heapUsed: usage.heapUsed, arrayBuffers: usage.arrayBuffers };
}

function checkpoints(total: number, capacity: number): number[] {
  const marks = [1_000, 10_000, 50_000, 100_000, 250_000, 500_000, 750_000, total, capacity, capacity * 2];
  return [...new Set(marks.filter((n) => n > 0 && n <= total))].sort((a, b) => a - b);
}

/** Child process: feeds `total` distinct values to one subject and records the heap. */
async function runSubject(subject: Subject, total: number, durationMs: number): Promise<SubjectResult> {
  const points: HeapPoint[] = [];
  let feed: (key: string) => void | Promise<void>;
  let keep: unknown;
  if (subject === 'floodgate') {
    const fg = new Floodgate();
    fg.loadHotParamRules([ruleOf(durationMs)]);
    feed = (key) => {
      const entry = fg.tryEntry('getProfile', { args: [key] });
      if (!isBlockError(entry)) entry.exit();
    };
    keep = fg;
  } else {
    // 10 points per 60 s: no key expires during the run, as with the hotspot rule's LRU.
    const limiter = new RateLimiterMemory({ points: 10, duration: 60 });
    feed = async (key) => {
      await limiter.consume(key).catch(() => undefined);
    };
    keep = limiter;
  }
  const marks = checkpoints(total, capacityOf(durationMs));
  points.push(readHeap(0));
  let fed = 0;
  let busyNs = 0n;
  for (const mark of marks) {
    const start = process.hrtime.bigint();
    for (; fed < mark; fed++) await feed(`user-${fed}`);
    busyNs += process.hrtime.bigint() - start;
    points.push(readHeap(fed));
  }
  void keep;
  return { subject, points, nsPerValue: Number(busyNs) / total };
}

function capacityOf(durationMs: number): number {
  return normalizeRuleSet({ hotParams: [ruleOf(durationMs)] }).hotParams![0]!.capacity;
}

/** Parent process: runs each subject in a fresh child and prints one table. */
function main(total: number, durationMs: number): void {
  const results: SubjectResult[] = [];
  for (const subject of ['floodgate', 'rlf'] as const) {
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, __filename, subject, String(total), String(durationMs)],
      {
        encoding: 'utf8',
        maxBuffer: 16 * MB,
      },
    );
    if (child.status !== 0) throw new Error(`${subject} failed:\n${child.stderr}`);
    results.push(JSON.parse(child.stdout.trim().split('\n').pop()!) as SubjectResult);
  }
  const [fg, rlf] = results as [SubjectResult, SubjectResult];
  const capacity = capacityOf(durationMs);
  const mb = (bytes: number): string => (bytes / MB).toFixed(1);
  console.log(
    `Heap after GC, ${total.toLocaleString('en-US')} distinct values (hotspot rule: 10 per ${durationMs} ms, default capacity ${capacity})`,
  );
  console.log(
    'values'.padStart(10),
    'floodgate heap MB'.padStart(18),
    '+arrayBuffers'.padStart(14),
    'rlf heap MB'.padStart(12),
  );
  for (let i = 0; i < fg.points.length; i++) {
    const a = fg.points[i]!;
    const b = rlf.points[i]!;
    const mark = a.values === capacity ? '  <- capacity reached' : '';
    console.log(
      String(a.values).padStart(10),
      mb(a.heapUsed).padStart(18),
      mb(a.heapUsed + a.arrayBuffers).padStart(14),
      mb(b.heapUsed).padStart(12) + mark,
    );
  }
  const atCapacity = fg.points.find((p) => p.values === capacity);
  const last = fg.points[fg.points.length - 1]!;
  const rlfGrowth = rlf.points[rlf.points.length - 1]!.heapUsed - rlf.points[0]!.heapUsed;
  const fgGrowth =
    atCapacity === undefined
      ? 'capacity not reached'
      : `${mb(last.heapUsed - atCapacity.heapUsed)} MB growth from capacity`;
  console.log(
    `floodgate: ${fgGrowth} to ${total.toLocaleString('en-US')} values; ` +
      `rlf: ${mb(rlfGrowth)} MB in all (${(rlfGrowth / total).toFixed(0)} B per value).`,
  );
  console.log(
    `time per value: floodgate ${fg.nsPerValue.toFixed(0)} ns (entry + exit), rlf ${rlf.nsPerValue.toFixed(0)} ns (await consume)`,
  );
}

const [, , first, second, third] = process.argv;
if (first === 'floodgate' || first === 'rlf') {
  void runSubject(first, Number(second), Number(third)).then((result) => console.log(JSON.stringify(result)));
} else {
  main(Number(first ?? 1_000_000), Number(second ?? 1000));
}
