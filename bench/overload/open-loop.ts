import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** Options of {@link openLoop}. */
export interface OpenLoopOptions {
  /** Requests sent per second, whatever the answers. */
  readonly ratePerSecond: number;
  /** Requests in all (fewer if `signal` aborts first). */
  readonly count: number;
  /** The path requested. @defaultValue '/report' */
  readonly path?: string;
  /** Most requests outstanding at once; past it sending waits (the load becomes a closed loop). @defaultValue unbounded */
  readonly maxInFlight?: number;
  /** A request unanswered this many ms after it was sent is abandoned, as a client giving up. @defaultValue never */
  readonly deadlineMs?: number;
  /**
   * The `x-priority` header of the `i`-th request (0-based), if any: its answers are also counted
   * by that value in {@link OpenLoopResult.byPriority}. @defaultValue no header
   */
  readonly priorityOf?: (i: number) => string | undefined;
  /** Stops sending when aborted: the run then ends when the requests sent have ended. */
  readonly signal?: AbortSignal;
}

/** What the requests of one `x-priority` value got. */
export interface PriorityClassResult {
  readonly sent: number;
  /** Answers by status code. */
  readonly statuses: Record<string, number>;
  /** Latency of every 200, in ms. */
  readonly okLatenciesMs: number[];
}

/** What one open-loop run saw. */
export interface OpenLoopResult {
  readonly sent: number;
  /** Answers by status code. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Requests abandoned at the deadline. */
  readonly timedOut: number;
  /** Requests that failed without an answer (connection errors). */
  readonly failed: number;
  /**
   * 200s whose answer ended while requests were still being sent: with `sendingSeconds`, the
   * goodput of the steady load, without the drain after the last request (a guard that queues
   * drains longer, and a run's whole length would charge it for that).
   */
  readonly okWhileSending: number;
  /** From the first request sent to the last. */
  readonly sendingSeconds: number;
  /** Latency of every 200, in ms. */
  readonly okLatenciesMs: readonly number[];
  /** From the first request sent to the last one ended, in s. */
  readonly seconds: number;
  /** By `x-priority` value, when `priorityOf` was given. */
  readonly byPriority?: Readonly<Record<string, PriorityClassResult>>;
}

/**
 * Sends `count` requests to 127.0.0.1:`port` at `ratePerSecond`, whatever the answers: open
 * loop, as users keep arriving whether or not the service keeps up (a fixed number of clients
 * would slow down with it and hide its queue). Resolves when every request has ended. Shared by
 * the overload benchmark, `examples/overload` and its end-to-end test.
 */
export function openLoop(port: number, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const {
    ratePerSecond,
    count,
    path = '/report',
    maxInFlight = Number.POSITIVE_INFINITY,
    deadlineMs,
    priorityOf,
    signal,
  } = options;
  /** Requests the run sends in all: `count`, or those sent when `signal` aborts. */
  let total = count;
  const byPriority: Record<string, PriorityClassResult> | undefined = priorityOf === undefined ? undefined : {};
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const statuses: Record<string, number> = {};
  const okLatenciesMs: number[] = [];
  let sent = 0;
  let ended = 0;
  let inFlight = 0;
  let timedOut = 0;
  let failed = 0;
  let okWhileSending = 0;
  let lastSentAt: number | undefined;
  const started = performance.now();
  return new Promise((resolve) => {
    const end = (): void => {
      agent.destroy();
      resolve({
        sent,
        statuses,
        timedOut,
        failed,
        okLatenciesMs,
        okWhileSending,
        sendingSeconds: ((lastSentAt ?? started) - started) / 1000,
        seconds: (performance.now() - started) / 1000,
        ...(byPriority !== undefined ? { byPriority } : {}),
      });
    };
    const send = (): void => {
      const priority = priorityOf?.(sent);
      const klass =
        priority === undefined || byPriority === undefined
          ? undefined
          : (byPriority[priority] ??= { sent: 0, statuses: {}, okLatenciesMs: [] });
      if (klass !== undefined) (klass as { sent: number }).sent++;
      sent++;
      inFlight++;
      const at = performance.now();
      let done = false;
      let deadline: NodeJS.Timeout | undefined;
      /** Ends the request once, however it ends: `record` counts how. */
      const finish = (record: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        record();
        inFlight--;
        if (++ended === total) end();
      };
      const headers = priority === undefined ? undefined : { 'x-priority': priority };
      const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
        res.resume();
        res.on('end', () =>
          finish(() => {
            const status = String(res.statusCode);
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (klass !== undefined) klass.statuses[status] = (klass.statuses[status] ?? 0) + 1;
            if (res.statusCode !== 200) return;
            const latency = performance.now() - at;
            if (lastSentAt === undefined) okWhileSending++;
            okLatenciesMs.push(latency);
            klass?.okLatenciesMs.push(latency);
          }),
        );
      });
      req.on('error', () => finish(() => failed++));
      if (deadlineMs !== undefined) {
        const giveUp = (): void => {
          timedOut++;
          req.destroy();
        };
        deadline = setTimeout(() => finish(giveUp), deadlineMs);
      }
      req.end();
      if (sent === total) lastSentAt = performance.now();
    };
    const tick = (): void => {
      if (signal?.aborted === true && sent < total) {
        total = sent;
        lastSentAt = performance.now();
        if (ended === total) end();
        return;
      }
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * ratePerSecond) + 1);
      while (sent < due && inFlight < maxInFlight) send();
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
}

/** The `p`-th percentile (0–100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
