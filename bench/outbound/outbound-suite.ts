import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { median } from '../lib/median';
import { pinnedCommand } from '../lib/pinned-command';
import { runJsonWorker } from '../lib/run-json-worker';
import type { OutboundWorkerResult } from './outbound-worker';

/** How the outbound suite runs. */
export interface OutboundSuiteSettings {
  /** Fresh worker processes. */
  readonly processes: number;
  /** Calls per case and round. */
  readonly calls: number;
  /** Rounds per process (every case once per round, interleaved). */
  readonly rounds: number;
  readonly serverCore: number;
  readonly clientCore: number;
  readonly log: (line: string) => void;
}

/** One case: the median CPU per call over every round of every process, and the samples. */
export interface OutboundCaseSummary {
  readonly id: string;
  readonly name: string;
  readonly cpuUsPerCall: number;
  readonly samples: number[];
}

/** What the outbound suite measured. */
export interface OutboundSuiteResult {
  readonly cases: OutboundCaseSummary[];
  /** Requests a failing upstream saw per call, medians over processes. */
  readonly amplification: { readonly floodgate: number; readonly cockatiel: number; readonly calls: number };
}

/**
 * Starts the upstream (its own process, on the server core), then runs the worker in `processes`
 * fresh processes on the client core; medians over every round.
 */
export async function runOutboundSuite(distDir: string, settings: OutboundSuiteSettings): Promise<OutboundSuiteResult> {
  const { file, args } = pinnedCommand(settings.serverCore, [join(distDir, 'outbound', 'outbound-server.js')]);
  const server = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      server.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
      server.once('exit', (code) => reject(new Error(`the outbound upstream exited (${code})`)));
    });
    const runs: OutboundWorkerResult[] = [];
    for (let i = 0; i < settings.processes; i++) {
      settings.log(`  outbound: process ${i + 1}/${settings.processes}`);
      runs.push(
        await runJsonWorker<OutboundWorkerResult>(
          join(distDir, 'outbound', 'outbound-worker.js'),
          [`http://127.0.0.1:${port}`, String(settings.calls), String(settings.rounds)],
          { core: settings.clientCore, nodeFlags: ['--expose-gc'] },
        ),
      );
    }
    const cases = runs[0]!.cases.map((first) => {
      const samples = runs.flatMap((run) => run.cases.find((c) => c.id === first.id)!.cpuUsPerCall);
      return { id: first.id, name: first.name, cpuUsPerCall: median(samples), samples };
    });
    return {
      cases,
      amplification: {
        floodgate: median(runs.map((r) => r.amplification.floodgate)),
        cockatiel: median(runs.map((r) => r.amplification.cockatiel)),
        calls: runs[0]!.amplification.calls,
      },
    };
  } finally {
    server.kill();
  }
}
