import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on every Linux we target). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) a process has used so far, in ms, read from /proc; NaN where /proc
 * is not available. Resolution 10 ms.
 */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name, which is in parentheses and may contain spaces
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time a process's threads have run so far, in ms, to the ns: the sum of each thread's run
 * time in /proc/<pid>/task/<tid>/schedstat (a thread that exits takes its time with it: Node's
 * threads live as long as the process). NaN where /proc is not available. For figures of a few
 * µs per call, which {@link processCpuMs}'s 10 ms ticks cannot resolve.
 */
export function processRunMs(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * Waits until a process is idle: its CPU time grows by less than 5 ms over 100 ms (a server
 * still answering the pipelined backlog of closed connections would steal the shared core from
 * the next run). Gives up after `maxMs`.
 */
export async function waitUntilIdle(pid: number, maxMs = 3000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let before = processCpuMs(pid);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = processCpuMs(pid);
    if (!(now - before >= 5)) return; // also ends on NaN (no /proc)
    before = now;
  }
}
