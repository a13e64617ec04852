import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeRuleSet } from '@floodgate/core/rules';
import { median } from '../lib/median';
import { runJsonWorker } from '../lib/run-json-worker';

/** One heap reading, as bench/hot-param-memory.ts prints it. */
export interface HeapPoint {
  /** Distinct values fed so far. */
  readonly values: number;
  /** `process.memoryUsage().heapUsed` after two full GCs, in bytes. */
  readonly heapUsed: number;
  /** `arrayBuffers` (typed arrays live outside the JS heap), in bytes. */
  readonly arrayBuffers: number;
}

/** What one child of bench/hot-param-memory.ts prints (its one JSON line). */
interface SubjectRun {
  readonly subject: 'floodgate' | 'rlf';
  readonly points: HeapPoint[];
  readonly nsPerValue: number;
}

/** How the memory suite runs. */
export interface MemorySuiteSettings {
  /** Distinct values fed to each subject. */
  readonly values: number;
  /** Fresh processes per subject. */
  readonly processes: number;
  readonly core: number;
  readonly log: (line: string) => void;
}

/** One subject's heap curve: the median over processes at each checkpoint. */
export interface MemorySubjectResult {
  readonly subject: 'floodgate' | 'rlf';
  readonly pending?: string;
  /** The hotspot rule's capacity (floodgate only). */
  readonly capacity: number | undefined;
  /** Heap at each checkpoint, median over processes. */
  readonly points: HeapPoint[];
  /** Mean time per new value, median over processes, in ns. */
  readonly nsPerValue: number;
}

/** The hotspot rule's period; bench/hot-param-memory.ts takes it as its third argument. */
const DURATION_MS = 1000;

/**
 * Feeds the same distinct keys (`user-0`, `user-1`, ...) to a Floodgate hotspot rule (10 per
 * second, default capacity) and to rate-limiter-flexible's RateLimiterMemory (10 per 60 s).
 *
 * The measuring is bench/hot-param-memory.ts's own (written with the hotspot rules, issue #4),
 * run as it is in its one-subject mode (`<floodgate|rlf> <values> <durationMs>`, one JSON line),
 * through tsx, in fresh `--expose-gc` processes pinned to one core; this suite only repeats it
 * and takes medians. HOOK: without that script the suite reports itself pending.
 */
export async function runMemorySuite(root: string, settings: MemorySuiteSettings): Promise<MemorySubjectResult[]> {
  const script = join(root, 'bench', 'hot-param-memory.ts');
  const capacity = normalizeRuleSet({
    hotParams: [{ resource: 'getProfile', paramIndex: 0, threshold: 10, durationMs: DURATION_MS }],
  }).hotParams![0]!.capacity;
  if (!existsSync(script)) {
    const pending = 'bench/hot-param-memory.ts is not in the tree yet (issue #4)';
    return (['floodgate', 'rlf'] as const).map((subject) => ({
      subject,
      pending,
      capacity,
      points: [],
      nsPerValue: Number.NaN,
    }));
  }
  const tsx = require.resolve('tsx/cjs');
  const out: MemorySubjectResult[] = [];
  for (const subject of ['floodgate', 'rlf'] as const) {
    const runs: SubjectRun[] = [];
    for (let i = 0; i < settings.processes; i++) {
      settings.log(
        `  memory: ${subject}, ${settings.values.toLocaleString('en-US')} values, process ${i + 1}/${settings.processes}`,
      );
      runs.push(
        await runJsonWorker<SubjectRun>(script, [subject, String(settings.values), String(DURATION_MS)], {
          core: settings.core,
          nodeFlags: ['--expose-gc', '-r', tsx],
        }),
      );
    }
    out.push({
      subject,
      capacity: subject === 'floodgate' ? capacity : undefined,
      points: runs[0]!.points.map((p, i) => ({
        values: p.values,
        heapUsed: median(runs.map((r) => r.points[i]?.heapUsed ?? Number.NaN)),
        arrayBuffers: median(runs.map((r) => r.points[i]?.arrayBuffers ?? Number.NaN)),
      })),
      nsPerValue: median(runs.map((r) => r.nsPerValue)),
    });
  }
  return out;
}
