import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

let tasksetKnown: boolean | undefined;

/** Whether `taskset` can pin processes here (Linux with util-linux, at least 2 cores). */
export function canPin(): boolean {
  if (tasksetKnown === undefined) {
    try {
      execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
      tasksetKnown = availableParallelism() >= 2;
    } catch {
      tasksetKnown = false;
    }
  }
  return tasksetKnown;
}

/**
 * The command line that runs `node args...` pinned to one core when `taskset` exists (taskset
 * execs, so the child's pid is node's). Without taskset the command runs unpinned.
 */
export function pinnedCommand(core: number, nodeArgs: readonly string[]): { file: string; args: string[] } {
  if (canPin()) return { file: 'taskset', args: ['-c', String(core), process.execPath, ...nodeArgs] };
  return { file: process.execPath, args: [...nodeArgs] };
}

/**
 * Pins a running process (every thread; threads it starts later inherit it) to one core, when
 * taskset exists; returns whether it did.
 */
export function pinProcess(pid: number, core: number): boolean {
  if (!canPin()) return false;
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
  return true;
}
