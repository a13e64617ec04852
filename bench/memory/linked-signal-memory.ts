/**
 * Heap retained by calls with `timeoutMs` and one long-lived caller signal (#24): `run()` links
 * the caller's signal to the call's own (which the timeout aborts) and unlinks it when the call
 * settles. Node 20's `AbortSignal.any([signal, own])`, which `run()` used before, keeps every
 * composite signal a long-lived source was ever combined into until the source aborts
 * (nodejs/node#55351): about 60 bytes a call, never freed while the signal lives.
 *
 * Two subjects, each in a fresh child process: `floodgate` (200,000 `fg.run()` calls, half
 * returning a value, half a promise, each with `timeoutMs` and the same signal) and `any` (the
 * same number of `AbortSignal.any([signal, new AbortController().signal])`, what each call did
 * before). The heap is read after two full GCs at checkpoints and once more after the signal
 * aborts.
 *
 * Run (from the repository root):
 *   npx tsx --expose-gc --conditions=@floodgate/source bench/memory/linked-signal-memory.ts [calls]
 * `calls` defaults to 200,000. A subject alone: `... linked-signal-memory.ts <floodgate|any> [calls]`.
 *
 * Expect the `floodgate` heap to stay flat, and the `any` one to grow by about 60 bytes a call.
 * This is a drill, not a test: it prints figures and asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { Floodgate } from '@floodgate/core';

type Subject = 'floodgate' | 'any';

interface HeapPoint {
  /** Calls made so far (`aborted`: after the signal aborted). */
  readonly calls: number | 'aborted';
  /** `process.memoryUsage().heapUsed` after two full GCs, bytes. */
  readonly heapUsed: number;
}

function readHeap(calls: number | 'aborted'): HeapPoint {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  gc();
  gc();
  return { calls, heapUsed: process.memoryUsage().heapUsed };
}

async function runSubject(subject: Subject, total: number): Promise<HeapPoint[]> {
  const caller = new AbortController();
  const signal = caller.signal;
  const fg = new Floodgate();
  fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 100 }]);
  const marks = new Set([0, total / 4, total / 2, total].map(Math.floor));
  const points: HeapPoint[] = [];
  for (let i = 0; i <= total; i++) {
    if (marks.has(i)) {
      // Let the timers of settled calls be cleared before reading.
      await new Promise((resolve) => setImmediate(resolve));
      points.push(readHeap(i));
    }
    if (i === total) break;
    if (subject === 'any') AbortSignal.any([signal, new AbortController().signal]);
    else if (i % 2 === 0) await fg.run('r', () => i, { timeoutMs: 60_000, signal });
    else await fg.run('r', () => Promise.resolve(i), { timeoutMs: 60_000, signal });
  }
  caller.abort();
  await new Promise((resolve) => setImmediate(resolve));
  points.push(readHeap('aborted'));
  return points;
}

function format(points: readonly HeapPoint[], total: number): string {
  const base = points[0]!.heapUsed;
  const rows = points.map((p) => {
    const grown = p.heapUsed - base;
    return `  ${String(p.calls).padStart(9)}  heap ${(p.heapUsed / 1024 / 1024).toFixed(2).padStart(7)} MB  ${grown >= 0 ? '+' : ''}${(grown / 1024 / 1024).toFixed(2)} MB`;
  });
  const end = points.find((p) => p.calls === total)!;
  rows.push(`  retained per call: ${((end.heapUsed - base) / total).toFixed(1)} B`);
  return rows.join('\n');
}

async function main(): Promise<void> {
  const [first, second] = process.argv.slice(2);
  if (first === 'floodgate' || first === 'any') {
    const total = Number(second ?? 200_000);
    process.stdout.write(`${JSON.stringify(await runSubject(first, total))}\n`);
    return;
  }
  const total = Number(first ?? 200_000);
  console.log(
    `Node ${process.version}, ${total.toLocaleString('en-US')} calls with timeoutMs and one long-lived signal`,
  );
  for (const subject of ['floodgate', 'any'] as const) {
    const child = spawnSync(process.execPath, [...process.execArgv, __filename, subject, String(total)], {
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`${subject} failed: ${child.stderr}`);
    const points = JSON.parse(child.stdout.trim().split('\n').pop()!) as HeapPoint[];
    console.log(`${subject === 'floodgate' ? 'fg.run() (signals linked and unlinked)' : 'AbortSignal.any (before)'}:`);
    console.log(format(points, total));
  }
}

void main();
