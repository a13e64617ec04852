import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedCommand } from '../lib/pinned-command';

/**
 * Standalone bench scripts written alongside the features they measure, folded into the suite
 * by running them as they are (with tsx, so they stay runnable on their own) and printing what
 * they print. (bench/hot-param-memory.ts is not here: the memory suite drives it.)
 * - `bench/cluster-redis.ts` (issue #8): cluster mode over a real Redis.
 * HOOK: a script that is not in the tree yet is reported as "not there yet" and skipped.
 */
export const EXTRA_SCRIPTS = [{ file: 'cluster-redis.ts', title: 'Cluster mode over Redis (bench/cluster-redis.ts, issue #8)' }] as const;

/** What one extra script printed. */
export interface ExtraResult {
  readonly file: string;
  readonly title: string;
  readonly status: 'missing' | 'ok' | 'failed';
  readonly output: string;
  readonly seconds: number;
}

/** How the extras run. */
export interface ExtrasSettings {
  readonly quick: boolean;
  readonly core: number;
  readonly timeoutMs: number;
  readonly log: (line: string) => void;
}

/**
 * Runs each extra script that exists: `node --import tsx bench/<file>` pinned to one core, with
 * `BENCH_QUICK=1` in quick mode. Its stdout goes into the report as printed.
 */
export async function runExtras(root: string, settings: ExtrasSettings): Promise<ExtraResult[]> {
  const out: ExtraResult[] = [];
  for (const { file, title } of EXTRA_SCRIPTS) {
    const path = join(root, 'bench', file);
    if (!existsSync(path)) {
      out.push({ file, title, status: 'missing', output: '', seconds: 0 });
      settings.log(`  extras: bench/${file} not there yet (hook left in bench/extras/extras-suite.ts)`);
      continue;
    }
    settings.log(`  extras: bench/${file}`);
    const started = Date.now();
    const { file: cmd, args } = pinnedCommand(settings.core, ['--import', 'tsx', path]);
    const env = { ...process.env, ...(settings.quick ? { BENCH_QUICK: '1' } : {}) };
    const result = await new Promise<{ ok: boolean; output: string }>((resolve) => {
      execFile(cmd, args, { cwd: root, env, timeout: settings.timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ ok: error === null, output: error === null ? stdout.trim() : `${stdout}\n${stderr}\n${error.message}`.trim() });
      });
    });
    out.push({ file, title, status: result.ok ? 'ok' : 'failed', output: result.output, seconds: (Date.now() - started) / 1000 });
  }
  return out;
}
