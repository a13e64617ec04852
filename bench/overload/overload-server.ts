/**
 * One overload server process: `node bench/dist/overload/overload-server.js <none|system|adaptive>`.
 * Express 5 with one CPU-bound route, `GET /report`: about `WORK_MS` of CPU per request in
 * `SLICES` steps, awaiting between them (as a handler awaiting its database), so requests in
 * flight share the one JavaScript thread. Guarded by nothing, by a system rule, or by an adaptive
 * concurrency rule, through `resilience()`. Listens on 127.0.0.1, prints `{"port":N}`, serves
 * until SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Floodgate, type FlowRuleOptions, type SystemRuleOptions } from '@floodgate/core';
import { resilience } from '@floodgate/express';
import express from 'express';

/** The guards compared. */
export type OverloadVariant = 'none' | 'system' | 'adaptive';
export const OVERLOAD_VARIANTS: readonly OverloadVariant[] = ['none', 'system', 'adaptive'];

/** CPU per request, in ms, and the steps it is done in. */
export const WORK_MS = 10;
const SLICES = 5;

/** The system rule of the `system` variant: shed while the event loop is over 80 % busy and BBR fails. */
export const OVERLOAD_SYSTEM_RULE: SystemRuleOptions = { maxEventLoopUtilization: 0.8 };
/** The rule of the `adaptive` variant: a latency-driven concurrency limit from 10 (defaults: 3 to 1000). */
export const OVERLOAD_ADAPTIVE_RULE: Omit<FlowRuleOptions, 'resource'> = {
  metric: 'concurrency',
  behavior: 'adaptive',
  threshold: 10,
};

/**
 * Iterations of the work loop per slice, measured once (after a warm-up) to take WORK_MS / SLICES
 * of CPU time (not wall time, which other processes on the machine would stretch).
 */
function calibrate(): number {
  spin(2_000_000);
  const probe = 4_000_000;
  const started = process.cpuUsage();
  spin(probe);
  const spent = process.cpuUsage(started);
  return Math.round(((probe / ((spent.user + spent.system) / 1000)) * WORK_MS) / SLICES);
}

let sink = 0;
function spin(iterations: number): void {
  let x = sink;
  for (let i = 0; i < iterations; i++) x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
  sink = x;
}

async function main(): Promise<void> {
  const variant = process.argv[2] as OverloadVariant;
  if (!OVERLOAD_VARIANTS.includes(variant)) throw new Error(`usage: overload-server <${OVERLOAD_VARIANTS.join('|')}>`);
  const perSlice = calibrate();
  const app = express();
  if (variant !== 'none') {
    const floodgate = new Floodgate();
    if (variant === 'system') floodgate.loadSystemRules([OVERLOAD_SYSTEM_RULE]);
    app.use(
      resilience({
        floodgate,
        routes: { 'GET /report': variant === 'adaptive' ? { rateLimit: OVERLOAD_ADAPTIVE_RULE } : {} },
      }),
    );
  }
  app.get('/report', async (_req, res) => {
    for (let i = 0; i < SLICES; i++) {
      if (i > 0) await yieldToLoop();
      spin(perSlice);
    }
    res.json({ ok: true });
  });
  const server = app.listen(0, '127.0.0.1', () =>
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`),
  );
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
