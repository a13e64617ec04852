import { join } from 'node:path';
import { median } from '../lib/median';
import { runJsonWorker } from '../lib/run-json-worker';
import { coreCases, type CaseOwner } from './core-cases';
import type { CoreWorkerResult } from './core-worker';

/** How the core suite runs. */
export interface CoreSuiteSettings {
  /** Fresh worker processes; each measures every case `passes` times. */
  readonly processes: number;
  readonly passes: number;
  /** mitata's minimum CPU time per measurement, in ms. */
  readonly minCpuMs: number;
  /** Calls per mitata sample. */
  readonly batchSamples: number;
  /** The core the workers are pinned to. */
  readonly core: number;
  readonly log: (line: string) => void;
}

/** One case's figures over every process and pass. */
export interface CoreCaseResult {
  readonly id: string;
  readonly owner: CaseOwner;
  readonly label: string;
  readonly async: boolean;
  /** Median time per call of every sample (process × pass), in ns. */
  readonly samples: number[];
  /** The median of `samples`, in ns. */
  readonly medianNs: number;
  readonly pending?: string;
  readonly failed?: string;
}

/** Runs the core cases in `processes` fresh processes and takes, per case, the median of every pass. */
export async function runCoreSuite(distDir: string, settings: CoreSuiteSettings): Promise<CoreCaseResult[]> {
  const script = join(distDir, 'core', 'core-worker.js');
  const workers: CoreWorkerResult[] = [];
  for (let i = 0; i < settings.processes; i++) {
    settings.log(`  core: process ${i + 1}/${settings.processes}`);
    workers.push(
      await runJsonWorker<CoreWorkerResult>(
        script,
        [String(settings.minCpuMs), String(settings.passes), String(settings.batchSamples)],
        {
          core: settings.core,
          nodeFlags: ['--expose-gc'],
        },
      ),
    );
  }
  return coreCases().map((c) => {
    const samples = workers.flatMap((w) => w.cases[c.id]?.p50 ?? []);
    const pending = workers[0]?.pending[c.id];
    const failed = workers.map((w) => w.failed[c.id]).find((why) => why !== undefined);
    return {
      id: c.id,
      owner: c.owner,
      label: c.label,
      async: c.async,
      samples,
      medianNs: median(samples),
      ...(pending === undefined ? {} : { pending }),
      ...(failed === undefined ? {} : { failed }),
    };
  });
}
