import type { Server } from 'node:http';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import { expressHarness } from '../../express/express-harness';
import { fastifyHarness } from '../../fastify/fastify-harness';
import { koaHarness } from '../../koa/koa-harness';
import type { Harness, Started } from '../../http/app-spec';

/** Lets I/O run until `condition` holds (no timers: the engine's time is a ManualClock). */
async function settled(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

const REDUCED_CAPACITY = {
  type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
  title: 'Request cannot be satisfied due to temporary server capacity constraints',
  status: 503,
  detail: 'The service is temporarily overloaded.',
  code: 'ERR_SYSTEM_BLOCKED',
};

describe.each([expressHarness, koaHarness, fastifyHarness] as Harness[])(
  'system protection over HTTP: $name',
  (harness) => {
    let clock: ManualClock;
    let probe: ManualProbe;
    let fg: Floodgate;
    let app: Started | undefined;

    beforeEach(() => {
      clock = new ManualClock(10_000);
      probe = new ManualProbe();
      fg = new Floodgate({ clock, probe });
    });

    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    /** An app whose resilience() guards /work (no rule of its own) and /limited (a flow rule). */
    async function start(): Promise<Server> {
      app = await harness.start({
        floodgate: fg,
        options: { routes: { 'GET /work': {}, 'GET /limited': { rateLimit: { threshold: 100 } } } },
        routes: [
          { method: 'GET', path: '/work', handler: () => ({ body: { ok: true } }) },
          { method: 'GET', path: '/limited', handler: () => ({ body: { ok: true } }) },
        ],
      });
      await new Promise<void>((resolve) => app!.server.listen(0, '127.0.0.1', resolve));
      return app.server;
    }

    it('answers 503 with Retry-After and a temporary-reduced-capacity problem while over a limit, then serves again', async () => {
      const server = await start();
      fg.loadSystemRules([{ maxHeapUsedBytes: 1_000_000, retryAfterMs: 2500 }]);
      await request(server).get('/work').expect(200);
      probe.set({ heapUsedBytes: 2_000_000 });
      const refused = await request(server).get('/work');
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(refused.headers['retry-after']).toBe('3');
      expect(refused.headers.ratelimit).toBeUndefined();
      expect(JSON.parse(refused.text)).toEqual({ ...REDUCED_CAPACITY, resource: 'GET /work' });
      await request(server).get('/limited').expect(503);
      probe.set({ heapUsedBytes: 500_000 });
      await request(server).get('/work').expect(200);
    });

    it("names the 'system' policy in the RateLimit headers of a maxQps refusal", async () => {
      const server = await start();
      fg.loadSystemRules([{ maxQps: 2 }]);
      await request(server).get('/work').expect(200);
      await request(server).get('/limited').expect(200);
      const refused = await request(server).get('/work');
      expect(refused.status).toBe(503);
      expect(refused.headers).toMatchObject({
        'retry-after': '1',
        'ratelimit-policy': '"system";q=2;w=1',
        ratelimit: '"system";r=0;t=1',
      });
      expect(JSON.parse(refused.text)).toEqual({
        ...REDUCED_CAPACITY,
        resource: 'GET /work',
        'violated-policies': ['system'],
      });
    });

    it('counts requests in flight across routes for maxConcurrency and releases them when answered', async () => {
      const server = await start();
      fg.loadSystemRules([{ maxConcurrency: 1 }]);
      const held = fg.entry('queue consumer', { inbound: true });
      await request(server).get('/work').expect(503);
      held.exit();
      for (let i = 0; i < 3; i++) {
        await request(server)
          .get(i % 2 === 0 ? '/work' : '/limited')
          .expect(200);
        await settled(() => fg.inboundStats().concurrency === 0); // the response's close exits its entries
      }
    });
  },
);
