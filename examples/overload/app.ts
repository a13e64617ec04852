/**
 * A CPU-bound Express service and the two ways Floodgate sheds load it cannot take:
 * - `GET /report` computes a report: about `workMs` of CPU in `slices` steps, awaiting between
 *   them as a handler awaiting its database would. Node runs JavaScript on one thread, so past
 *   its capacity every request in flight just waits longer for the CPU;
 * - `protection: 'system'` loads a system rule: while the event loop is busy more than 80 % of
 *   the time and more requests are in flight than the process completes (Sentinel's BBR check),
 *   new requests get 503 at once instead of queueing;
 * - `protection: 'adaptive'` guards the route with an adaptive concurrency rule: its limit
 *   follows the latency it measures (503 past it);
 * - `protection: 'none'` is the same service unguarded, for comparison.
 * `createApp()` does not listen; see main.ts (`npx tsx --conditions=@floodgate/source
 * examples/overload/main.ts`) and test/examples/overload.test.ts.
 */
import express, { type Express } from 'express';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Floodgate } from '@floodgate/core';
import type { FlowRuleOptions, SystemRuleOptions } from '@floodgate/core/rules';
import { resilience } from '@floodgate/express';

/** How the service protects itself. */
export type Protection = 'none' | 'system' | 'adaptive';

/** The system rule of `protection: 'system'`: shed while the event loop is over 80 % busy (and BBR fails). */
export const SYSTEM_RULE: SystemRuleOptions = { maxEventLoopUtilization: 0.8 };

/** The route rule of `protection: 'adaptive'`: a concurrency limit starting at 8, between 2 and 200. */
export const ADAPTIVE_RULE: Omit<FlowRuleOptions, 'resource'> = {
  metric: 'concurrency',
  behavior: 'adaptive',
  threshold: 8,
  minLimit: 2,
  maxLimit: 200,
};

/** Options of {@link createApp}. */
export interface OverloadAppOptions {
  /** The engine. @defaultValue a new one */
  readonly floodgate?: Floodgate;
  /** @defaultValue 'system' */
  readonly protection?: Protection;
  /** CPU per request, in ms. @defaultValue 10 */
  readonly workMs?: number;
  /** Steps the work is done in, awaiting between them. @defaultValue 5 */
  readonly slices?: number;
}

/**
 * Fixed CPU work: a loop of as many iterations as take `ms` of CPU time on this machine,
 * measured once in CPU time (not wall time, which other processes would stretch); a busy
 * machine then makes each request slower, as it would real work.
 */
export class CpuWork {
  private readonly iterationsPerSlice: number;
  /** A result the loop feeds, so it cannot be optimised away. */
  private sink = 0;

  constructor(
    readonly ms: number,
    readonly slices: number,
  ) {
    this.spin(2_000_000); // compiled before it is timed
    const probe = 4_000_000;
    const started = process.cpuUsage();
    this.spin(probe);
    const spent = process.cpuUsage(started);
    const perMs = probe / Math.max(0.01, (spent.user + spent.system) / 1000);
    this.iterationsPerSlice = Math.max(1, Math.round((perMs * ms) / slices));
  }

  /** Does the work, yielding to the event loop between slices. */
  async run(): Promise<void> {
    for (let i = 0; i < this.slices; i++) {
      if (i > 0) await yieldToLoop();
      this.spin(this.iterationsPerSlice);
    }
  }

  private spin(iterations: number): void {
    let x = this.sink;
    for (let i = 0; i < iterations; i++) x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    this.sink = x;
  }
}

/** Builds the app (without listening). */
export function createApp(options: OverloadAppOptions = {}): Express {
  const fg = options.floodgate ?? new Floodgate();
  const protection = options.protection ?? 'system';
  const work = new CpuWork(options.workMs ?? 10, options.slices ?? 5);
  const app = express();
  if (protection !== 'none') {
    if (protection === 'system') fg.loadSystemRules([SYSTEM_RULE]);
    app.use(
      resilience({
        floodgate: fg,
        routes: { 'GET /report': protection === 'adaptive' ? { rateLimit: ADAPTIVE_RULE } : {} },
      }),
    );
  }
  app.get('/report', async (_req, res) => {
    await work.run();
    res.json({ ok: true });
  });
  return app;
}
