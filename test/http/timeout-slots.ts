import type { Server } from 'node:http';
import fc from 'fast-check';
import { Floodgate } from '@floodgate/core';
import request from 'supertest';
import type { AppSpec, Harness, NeutralRequest, RouteSpec } from './app-spec';
import { RawSession } from './raw-session';
import { openRaw, rawRequest, type RawConnection } from './raw-client';
import { throwingScheduleClock } from '../support/own-clocks';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { until } from '../support/until';

/**
 * A concurrency limit bounds the handlers running, timeouts or not (#24): run against each
 * framework by its harness. A route's timeout answers the client at once, but the request
 * keeps its slot until its handler has settled, so handlers that ignore the timeout never run
 * more at once than the limit; a handler that never settles keeps its slot for good, and the
 * limit refuses what comes after it.
 */

const LIMIT = 2;
const TIMEOUT_MS = 1000;

/** The handlers of one app: each waits for the test to settle it, ignoring its timeout. */
class Handlers {
  /** The `X-Id` of each request whose handler runs now. */
  readonly ids = new Set<string>();
  /** The most that ever ran at once. */
  most = 0;
  private readonly pending: { resolve(): void; reject(): void }[] = [];

  get running(): number {
    return this.ids.size;
  }

  readonly handler = async (req: NeutralRequest): Promise<{ body: unknown }> => {
    const id = String(req.headers['x-id'] ?? Math.random());
    this.ids.add(id);
    this.most = Math.max(this.most, this.ids.size);
    try {
      await new Promise<void>((resolve, reject) =>
        this.pending.push({ resolve, reject: () => reject(new Error('handler failed late')) }),
      );
      return { body: { done: true } };
    } finally {
      this.ids.delete(id);
    }
  };

  /** Settles the `nth` running handler (modulo), resolving or rejecting it; false when none runs. */
  settle(nth: number, reject = false): boolean {
    if (this.pending.length === 0) return false;
    const [chosen] = this.pending.splice(nth % this.pending.length, 1);
    if (reject) chosen!.reject();
    else chosen!.resolve();
    return true;
  }

  settleAll(): void {
    while (this.settle(0));
  }
}

/** Where the route's concurrency limit and timeout are declared. */
type Placement = 'guard' | 'pattern';

function slowRoute(handlers: Handlers, placement: Placement): Omit<AppSpec, 'floodgate'> {
  const rules = { rateLimit: { metric: 'concurrency', threshold: LIMIT }, timeoutMs: TIMEOUT_MS };
  const route: RouteSpec = {
    method: 'GET',
    path: '/work',
    ...(placement === 'guard' ? { guard: rules } : {}),
    handler: handlers.handler,
  };
  return { ...(placement === 'pattern' ? { options: { routes: { 'GET /work': rules } } } : {}), routes: [route] };
}

/** Runs the timeout-and-slot tests against one framework. */
export function runTimeoutSlots(harness: Harness): void {
  const session = new RawSession(harness);
  const start = (spec: Omit<AppSpec, 'floodgate'>): Promise<Server> => session.start(spec);

  let sentCount = 0;
  /** Sends one request on its own connection (closed by the server after the answer if `close`), with an `X-Id`. */
  function send(server: Server, close = false): RawConnection & { readonly id: string } {
    const id = String(++sentCount);
    const headers: Record<string, string> = close ? { 'X-Id': id, Connection: 'close' } : { 'X-Id': id };
    const client = Object.assign(openRaw(server, rawRequest('GET', '/work', headers)), { id });
    session.clients.push(client);
    return client;
  }

  const concurrency = (): number => session.concurrency('GET /work');

  describe(`${harness.name}: timeouts and concurrency slots`, () => {
    it.each(['guard', 'pattern'] as const)(
      'runs no more handlers at once than the limit when timeouts answer their clients (limit by %s) (#24)',
      async (placement) => {
        const handlers = new Handlers();
        const server = await start(slowRoute(handlers, placement));
        const first = [send(server), send(server)];
        await until(() => handlers.running === 2, 'both handlers to start');
        await session.clock.advance(TIMEOUT_MS);
        await until(() => first.every((c) => c.statuses.length === 1), 'both timeouts to answer');
        expect(first.map((c) => c.statuses[0])).toEqual([503, 503]);
        expect(concurrency()).toBe(2);
        await request(server).get('/work').expect(429);
        handlers.settle(0);
        await until(() => concurrency() === 1, 'the settled handler to give its slot back');
        const next = send(server);
        await until(() => handlers.running === 2, 'the next request to reach its handler');
        expect(handlers.most).toBe(LIMIT);
        expect(next.statuses).toEqual([]);
        expect(session.errors).toEqual([]);
      },
    );

    it('keeps the slot of a handler that never settles, however long: the limit refuses what comes after (#24)', async () => {
      const handlers = new Handlers();
      const server = await start(slowRoute(handlers, 'guard'));
      send(server);
      send(server);
      await until(() => handlers.running === 2, 'both handlers to start');
      for (let i = 0; i < 5; i++) {
        await session.clock.advance(60_000);
        await request(server).get('/work').expect(429);
      }
      expect(concurrency()).toBe(LIMIT);
      expect(session.fg.totals('GET /work')).toMatchObject({ error: 2, timeout: 2 });
    });

    it('answers 500 with the error of a clock whose schedule throws, and gives the slot back', async () => {
      session.fg = new Floodgate({ clock: throwingScheduleClock(session.clock, 'clock broke') });
      const handlers = new Handlers();
      const server = await start(slowRoute(handlers, 'guard'));
      for (let i = 0; i < LIMIT + 1; i++) {
        await request(server).get('/work').expect(500);
        await until(() => concurrency() === 0, 'the request to give its slot back');
      }
      expect(handlers.most).toBe(0);
      expect(session.errors).toHaveLength(LIMIT + 1);
      expect(session.errors.every((error) => (error as Error).message === 'clock broke')).toBe(true);
    });

    it('keeps the slot when the connection closes after the timeout’s answer, until the handler settles (#24)', async () => {
      const handlers = new Handlers();
      const server = await start(slowRoute(handlers, 'guard'));
      const client = send(server, true);
      await until(() => handlers.running === 1, 'the handler to start');
      await session.clock.advance(TIMEOUT_MS);
      await client.closed;
      expect(client.statuses).toEqual([503]);
      expect(concurrency()).toBe(1);
      handlers.settle(0, true);
      await until(() => concurrency() === 0, 'the handler to settle');
      expect(session.fg.totals('GET /work')).toMatchObject({ error: 1, timeout: 1 });
    });

    it(
      'property: the slots counted are the handlers running, never more than the limit, whatever timeouts pass (#24)',
      async () => {
        const op = fc.oneof(
          { weight: 4, arbitrary: fc.record({ op: fc.constant('request' as const), close: fc.boolean() }) },
          { weight: 3, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(300, 1000) }) },
          {
            weight: 3,
            arbitrary: fc.record({ op: fc.constant('settle' as const), nth: fc.nat(), reject: fc.boolean() }),
          },
        );
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom<Placement>('guard', 'pattern'),
            fc.array(op, { minLength: 1, maxLength: 14 }),
            async (placement, ops) => {
              session.renew();
              const handlers = new Handlers();
              const server = await start(slowRoute(handlers, placement));
              const sent: (RawConnection & { readonly id: string })[] = [];
              /** Every request answered or in its handler, and the slots held exactly the handlers running. */
              const quiet = (): boolean =>
                sent.every((c) => c.statuses.length > 0 || handlers.ids.has(c.id)) &&
                concurrency() === handlers.running;
              try {
                for (const step of ops) {
                  if (step.op === 'request') sent.push(send(server, step.close));
                  else if (step.op === 'advance') await session.clock.advance(step.ms);
                  else handlers.settle(step.nth, step.reject);
                  await until(quiet, `quiet after ${JSON.stringify(step)} in ${JSON.stringify(ops)}`);
                  expect(handlers.running).toBeLessThanOrEqual(LIMIT);
                }
                expect(handlers.most).toBeLessThanOrEqual(LIMIT);
                handlers.settleAll();
                await until(() => concurrency() === 0, 'every slot to be given back');
              } finally {
                await session.stop();
              }
            },
          ),
          propertyRuns(12),
        );
      },
      propertyTimeoutMs(12),
    );
  });
}
