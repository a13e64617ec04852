import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** What one open-loop run saw. */
export interface OpenLoopResult {
  readonly sent: number;
  /** Answers by status code. */
  readonly statuses: Record<string, number>;
  /** Requests abandoned at the deadline. */
  readonly timedOut: number;
  /** Requests that failed without an answer. */
  readonly failed: number;
  /** Latency of every 200, in ms. */
  readonly okLatenciesMs: number[];
  /** From the first request sent to the last one ended, in s. */
  readonly seconds: number;
}

/**
 * Sends `GET path` to 127.0.0.1:`port` at `ratePerSecond` for `seconds`, whatever the answers
 * (open loop: users keep arriving whether or not the service keeps up, unlike a fixed number of
 * connections that slow down with it), at most `maxInFlight` outstanding. A request unanswered
 * after `deadlineMs` is abandoned (its socket destroyed, as a client giving up does).
 */
export function openLoop(port: number, path: string, ratePerSecond: number, seconds: number, deadlineMs: number, maxInFlight = Number.POSITIVE_INFINITY): Promise<OpenLoopResult> {
  const count = Math.max(1, Math.round(ratePerSecond * seconds));
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const statuses: Record<string, number> = {};
  const okLatenciesMs: number[] = [];
  let sent = 0;
  let ended = 0;
  let inFlight = 0;
  let timedOut = 0;
  let failed = 0;
  const started = performance.now();
  return new Promise((resolve) => {
    const end = (): void => {
      inFlight--;
      if (++ended < count) return;
      agent.destroy();
      resolve({ sent, statuses, timedOut, failed, okLatenciesMs, seconds: (performance.now() - started) / 1000 });
    };
    const send = (): void => {
      sent++;
      inFlight++;
      const at = performance.now();
      let done = false;
      const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (done) return;
          done = true;
          const status = String(res.statusCode);
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (res.statusCode === 200) okLatenciesMs.push(performance.now() - at);
          end();
        });
      });
      req.on('error', () => {
        if (done) return;
        done = true;
        failed++;
        end();
      });
      req.setTimeout(deadlineMs, () => {
        if (done) return;
        done = true;
        timedOut++;
        req.destroy();
        end();
      });
      req.end();
    };
    const tick = (): void => {
      const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * ratePerSecond) + 1);
      while (sent < due && inFlight < maxInFlight) send();
      if (sent < count) setTimeout(tick, 1);
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
