/**
 * One overload server process: `node bench/dist/overload/overload-server.js <variant>`.
 * Express 5 with one CPU-bound route, `GET /report`: the event loop kept busy for `WORK_MS` of
 * the clock per request in `SLICES` steps, awaiting between them (as a handler awaiting its
 * database), so requests in flight share the one JavaScript thread; the same work unguarded on `GET /unguarded`, and
 * `GET /refused` answered 503 at once. Guarded by nothing, by a system rule, or by an adaptive
 * concurrency rule, through `resilience()`; for mixed traffic (requests marked by `x-priority`),
 * by the adaptive rule blind to priorities, the adaptive rule reading them, a concurrency
 * limit partitioned by priority, or a concurrency limit whose queue serves by priority. Listens on 127.0.0.1, prints `{"port":N}`, serves until SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Floodgate } from '@floodgate/core';
import type { FlowRuleOptions, SystemRuleOptions } from '@floodgate/core/rules';
import { resilience } from '@floodgate/express';
import express from 'express';

/** The guards compared. */
export type OverloadVariant = 'none' | 'system' | 'adaptive';
export const OVERLOAD_VARIANTS: readonly OverloadVariant[] = ['none', 'system', 'adaptive'];

/** The guards compared under mixed traffic (20 % critical, 80 % sheddable). */
export type MixedVariant = 'none' | 'blind' | 'priority' | 'partitioned' | 'queued';
export const MIXED_VARIANTS: readonly MixedVariant[] = ['none', 'blind', 'priority', 'partitioned', 'queued'];

/** The route's work on a path every variant serves before any guard: its capacity in the server at hand. */
export const UNGUARDED_PATH = '/unguarded';

/**
 * A path every variant answers 503 at once, before any middleware sees it: the refusals of an
 * ideal guard, which costs nothing to decide and sends no body.
 */
export const REFUSED_PATH = '/refused';

/** The event loop's time each request keeps busy, in ms, and the steps it is done in. */
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
 * The rule of the `priority` variant: the adaptive rule, reading each request's priority from
 * `x-priority` (trusted here: `max: 'critical'`), sheddable requests refused from half the limit,
 * critical ones let in up to twice it.
 */
export const MIXED_PRIORITY_RULE: Omit<FlowRuleOptions, 'resource'> = {
  ...OVERLOAD_ADAPTIVE_RULE,
  priorityFactors: { sheddable: 0.5, critical: 2 },
};
/**
 * The rule of the `partitioned` variant: 6 requests in flight, 4 guaranteed to critical ones
 * (floor(0.7 × 6)), 1 to sheddable ones (floor(0.3 × 6)), the sixth to either.
 */
export const MIXED_PARTITIONED_RULE: Omit<FlowRuleOptions, 'resource'> = {
  metric: 'concurrency',
  threshold: 6,
  partitions: { critical: 0.7, sheddable: 0.3 },
};

/**
 * The rule of the `queued` variant: one request in flight (the route is CPU-bound: a second one
 * would only share the core), up to 10 waiting, served by priority (`prioritized`): a critical
 * request waits only for the one in flight, and takes the place of the newest sheddable waiter
 * when the queue is full.
 */
export const MIXED_QUEUED_RULE: Omit<FlowRuleOptions, 'resource'> = {
  metric: 'concurrency',
  threshold: 1,
  maxQueueLength: 10,
  maxQueueingTimeMs: 500,
  prioritized: true,
};

/**
 * Keeps the event loop busy for `ms` of the clock. Timed, not a count of iterations: the time a
 * loop of a fixed count took changed part-way through a server's life (V8, once the handler was
 * hot, optimised it with the loop inlined, and that code ran it 10–15 % slower), so a capacity
 * measured before that overstated the one a run after it had. Timed, the route's cost is the same
 * in every phase of every server; only what the server does around it (Express, the guard, the
 * refusals) depends on the machine's speed.
 */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

async function main(): Promise<void> {
  const variant = process.argv[2] as OverloadVariant | MixedVariant;
  const all: readonly string[] = [...OVERLOAD_VARIANTS, ...MIXED_VARIANTS];
  if (!all.includes(variant)) throw new Error(`usage: overload-server <${all.join('|')}>`);
  const report = async (_req: express.Request, res: express.Response): Promise<void> => {
    for (let i = 0; i < SLICES; i++) {
      if (i > 0) await yieldToLoop();
      busy(WORK_MS / SLICES);
    }
    res.json({ ok: true });
  };
  const app = express();
  // Before any guard: the route's capacity in this server, and the least a refusal can cost.
  app.get(UNGUARDED_PATH, report);
  app.get(REFUSED_PATH, (_req, res) => {
    res.status(503).end();
  });
  if (variant !== 'none') {
    const floodgate = new Floodgate();
    if (variant === 'system') floodgate.loadSystemRules([OVERLOAD_SYSTEM_RULE]);
    const rateLimit =
      variant === 'adaptive' || variant === 'blind'
        ? OVERLOAD_ADAPTIVE_RULE
        : variant === 'priority'
          ? MIXED_PRIORITY_RULE
          : variant === 'partitioned'
            ? MIXED_PARTITIONED_RULE
            : variant === 'queued'
              ? MIXED_QUEUED_RULE
              : undefined;
    app.use(
      resilience({
        floodgate,
        ...(variant === 'priority' || variant === 'partitioned' || variant === 'queued'
          ? { priority: { header: 'x-priority', max: 'critical' } as const }
          : {}),
        routes: { 'GET /report': rateLimit === undefined ? {} : { rateLimit } },
      }),
    );
  }
  app.get('/report', report);
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
