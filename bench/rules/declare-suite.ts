import { join } from 'node:path';
import { median } from '../lib/median';
import { runJsonWorker } from '../lib/run-json-worker';

/** One count's figures, as declare-worker prints them. */
interface DeclareRun {
  readonly count: number;
  readonly rules: number;
  readonly declareUsPerRule: number;
  readonly firstUseUsPerRule: number;
}

/** The declare benchmark for one count: medians over fresh processes. */
export interface DeclareResult extends DeclareRun {
  /** Cost per rule (declare + first use) relative to the smallest count's. */
  readonly relative: number;
}

/** How the rules suite runs. */
export interface DeclareSuiteSettings {
  readonly counts: readonly number[];
  readonly processes: number;
  readonly core: number;
  readonly log: (line: string) => void;
}

/**
 * Declaring rules one by one must cost linear time (issue #13: 250, 500, 1,000 and 2,000
 * declarations took 0.3, 1.0, 3.4 and 14.7 s when every declaration recompiled every resource):
 * the cost per rule from the smallest count to the largest stays within 2×.
 */
export async function runDeclareSuite(distDir: string, settings: DeclareSuiteSettings): Promise<DeclareResult[]> {
  const script = join(distDir, 'rules', 'declare-worker.js');
  const results: DeclareRun[] = [];
  for (const count of settings.counts) {
    const runs: DeclareRun[] = [];
    for (let i = 0; i < settings.processes; i++) {
      settings.log(
        `  rules: declare ${count.toLocaleString('en-US')} resources, process ${i + 1}/${settings.processes}`,
      );
      runs.push(await runJsonWorker<DeclareRun>(script, [String(count)], { core: settings.core }));
    }
    results.push({
      count,
      rules: runs[0]!.rules,
      declareUsPerRule: median(runs.map((r) => r.declareUsPerRule)),
      firstUseUsPerRule: median(runs.map((r) => r.firstUseUsPerRule)),
    });
  }
  const base = results[0]!.declareUsPerRule + results[0]!.firstUseUsPerRule;
  return results.map((r) => ({ ...r, relative: (r.declareUsPerRule + r.firstUseUsPerRule) / base }));
}
