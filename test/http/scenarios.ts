import { get, type Server } from 'node:http';
import request from 'supertest';
import { Floodgate, RateLimit, type BlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { MAX_HEADER_VALUE } from '@floodgate/core/http';
import { MAX_DURATION_MS } from '../../packages/core/src/kernel/rule-reader';
import type { AppSpec, Handler, Harness, RouteSpec, Started } from './app-spec';
import { openRaw, rawRequest, sendRaw } from './raw-client';
import { badHeaderNumbers } from '../support/header-numbers';

/**
 * One table of HTTP scenarios, run against each framework by its harness: the same requests,
 * the same expected statuses, headers and bodies.
 */

const PROBLEM_JSON = 'application/problem+json; charset=utf-8';
const QUOTA_EXCEEDED = {
  type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
  title: 'Request cannot be satisfied as assigned quota has been exceeded',
  status: 429,
};
const REDUCED_CAPACITY = {
  type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
  title: 'Request cannot be satisfied due to temporary server capacity constraints',
  status: 503,
};
const FLOW_DETAIL = 'The request rate limit of this resource was exceeded.';
const HOTSPOT_DETAIL = 'The request rate limit for this caller or parameter value was exceeded.';
const OPEN_DETAIL = 'The resource is temporarily unavailable: its circuit breaker is open.';

const ok: Handler = () => ({ body: { ok: true } });

/** A request as a raw client: it can leave before the answer. */
function rawGet(server: Server, path: string): { readonly answered: Promise<number>; leave(): void } {
  const { port } = server.address() as { port: number };
  const req = get({ host: '127.0.0.1', port, path, agent: false });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  answered.catch(() => undefined);
  return { answered, leave: () => req.destroy() };
}

/** Lets I/O and promises run until `condition` holds (no timers: the app's time is the ManualClock). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Runs every scenario against one framework. */
export function runScenarios(harness: Harness): void {
  let clock: ManualClock;
  let fg: Floodgate;
  let app: Started | undefined;

  beforeEach(() => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(spec: Omit<AppSpec, 'floodgate'>): Promise<Server> {
    app = await harness.start({ floodgate: fg, ...spec });
    const { server } = app;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  const concurrency = (resource: string): number => fg.stats(resource)?.concurrency ?? 0;

  describe(`${harness.name}: limits`, () => {
    it('answers 429 past a global limit on every route, with Retry-After, RateLimit headers and a problem body', async () => {
      const server = await start({
        options: { routes: { '*': { rateLimit: { threshold: 2 } } } },
        routes: [
          { method: 'GET', path: '/a', handler: ok },
          { method: 'GET', path: '/b', handler: ok },
        ],
      });
      await request(server).get('/a').expect(200);
      await request(server).get('/b').expect(200);
      const blocked = await request(server).get('/a');
      expect(blocked.status).toBe(429);
      expect(blocked.headers).toMatchObject({
        'content-type': PROBLEM_JSON,
        'retry-after': '1',
        'ratelimit-policy': '"flow";q=2;w=1',
        ratelimit: '"flow";r=0;t=1',
      });
      expect(JSON.parse(blocked.text)).toEqual({
        ...QUOTA_EXCEEDED,
        detail: FLOW_DETAIL,
        code: 'ERR_FLOW_BLOCKED',
        resource: '* /*',
        'violated-policies': ['flow'],
      });
    });

    it('lets requests through again once the window has passed', async () => {
      const server = await start({
        options: { routes: { '*': { rateLimit: { threshold: 1 } } } },
        routes: [{ method: 'GET', path: '/a', handler: ok }],
      });
      await request(server).get('/a').expect(200);
      await request(server).get('/a').expect(429);
      await clock.advance(1000);
      await request(server).get('/a').expect(200, { ok: true });
    });

    it('sends no RateLimit headers on passing responses', async () => {
      const server = await start({
        options: { routes: { '*': { rateLimit: { threshold: 5 } } } },
        routes: [{ method: 'GET', path: '/a', handler: ok }],
      });
      const passed = await request(server).get('/a').expect(200);
      expect(passed.headers).not.toHaveProperty('ratelimit');
      expect(passed.headers).not.toHaveProperty('ratelimit-policy');
    });

    it('limits every URL of a route pattern as one resource named by the pattern', async () => {
      const server = await start({
        options: { routes: { 'GET /users/:id': { rateLimit: { threshold: 1 } } } },
        routes: [
          { method: 'GET', path: '/users/:id', handler: ok },
          { method: 'POST', path: '/users/:id', handler: ok },
        ],
      });
      await request(server).get('/users/1').expect(200);
      const blocked = await request(server).get('/users/2').expect(429);
      expect(JSON.parse(blocked.text)).toMatchObject({ resource: 'GET /users/:id' });
      await request(server).post('/users/1').expect(200);
    });

    it('applies a per-route limit to its own route only, named by the route template', async () => {
      const server = await start({
        routes: [
          { method: 'GET', path: '/limited/:id', guard: { rateLimit: { threshold: 1 } }, handler: ok },
          { method: 'GET', path: '/free', handler: ok },
        ],
      });
      await request(server).get('/limited/1').expect(200);
      const blocked = await request(server).get('/limited/2').expect(429);
      expect(blocked.headers).toMatchObject({ 'content-type': PROBLEM_JSON, 'ratelimit-policy': '"flow";q=1;w=1' });
      expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'GET /limited/:id' });
      await request(server).get('/free').expect(200);
    });

    it('gives the per-route rules of one route a single entry, from the first request', async () => {
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/stacked',
            guard: {
              rateLimit: { threshold: 10 },
              circuitBreaker: {
                strategy: 'errorCount',
                threshold: 0,
                minRequestAmount: 1,
                statIntervalMs: 60_000,
                retryTimeoutMs: 5000,
              },
            },
            handler: () => ({ status: 500, body: { error: 'down' } }),
          },
        ],
      });
      await request(server).get('/stacked').expect(500);
      expect(fg.stats('GET /stacked')!.lastSecond.pass).toBe(1);
      await request(server).get('/stacked').expect(503);
    });

    it('checks a global limit and a route pattern both, in order', async () => {
      const server = await start({
        options: {
          routes: { '*': { rateLimit: { threshold: 3 } }, 'GET /users/:id': { rateLimit: { threshold: 1 } } },
        },
        routes: [
          { method: 'GET', path: '/users/:id', handler: ok },
          { method: 'GET', path: '/other', handler: ok },
        ],
      });
      await request(server).get('/users/1').expect(200);
      expect(JSON.parse((await request(server).get('/users/1').expect(429)).text).resource).toBe('GET /users/:id');
      await request(server).get('/other').expect(200);
      await request(server).get('/other').expect(200);
      expect(JSON.parse((await request(server).get('/other').expect(429)).text).resource).toBe('* /*');
    });

    it('writes the RateLimit headers in the draft asked for', async () => {
      const server = await start({
        options: { headers: 'draft-6', routes: { '*': { rateLimit: { threshold: 1 } } } },
        routes: [{ method: 'GET', path: '/a', handler: ok }],
      });
      await request(server).get('/a').expect(200);
      const blocked = await request(server).get('/a').expect(429);
      expect(blocked.headers).toMatchObject({
        'ratelimit-policy': '1;w=1',
        'ratelimit-limit': '1',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '1',
      });
      expect(JSON.parse(blocked.text)).not.toHaveProperty('violated-policies');
    });

    it('writes no RateLimit headers when they are off, but still Retry-After', async () => {
      const server = await start({
        options: { headers: false, routes: { '*': { rateLimit: { threshold: 1 } } } },
        routes: [{ method: 'GET', path: '/a', handler: ok }],
      });
      await request(server).get('/a').expect(200);
      const blocked = await request(server).get('/a').expect(429);
      expect(blocked.headers['retry-after']).toBe('1');
      expect(blocked.headers).not.toHaveProperty('ratelimit');
      expect(blocked.headers).not.toHaveProperty('ratelimit-policy');
    });

    it('answers 403 to an origin an authority rule refuses', async () => {
      fg.loadAuthorityRules([{ resource: 'GET /admin', strategy: 'allow', origins: ['backoffice'] }]);
      const server = await start({
        options: {
          origin: (req: { headers: Record<string, unknown> }) => String(req.headers['x-app'] ?? ''),
          routes: { 'GET /admin': {} },
        },
        routes: [{ method: 'GET', path: '/admin', handler: ok }],
      });
      await request(server).get('/admin').set('x-app', 'backoffice').expect(200);
      const refused = await request(server).get('/admin').set('x-app', 'web').expect(403);
      expect(refused.headers['content-type']).toBe(PROBLEM_JSON);
      expect(JSON.parse(refused.text)).toEqual({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: 'The caller is not allowed to access this resource.',
        code: 'ERR_AUTHORITY_BLOCKED',
        resource: 'GET /admin',
      });
    });
  });

  describe(`${harness.name}: hotspot limits`, () => {
    it('limits each user on its own, with a higher limit for a VIP', async () => {
      const server = await start({
        options: {
          routes: {
            'GET /users/:id': {
              hotParam: {
                param: (req: { headers: Record<string, unknown> }) => req.headers['x-user'],
                threshold: 1,
                specificItems: { vip: 3 },
              },
            },
          },
        },
        routes: [{ method: 'GET', path: '/users/:id', handler: ok }],
      });
      await request(server).get('/users/1').set('x-user', 'alice').expect(200);
      const blocked = await request(server).get('/users/1').set('x-user', 'alice').expect(429);
      expect(blocked.headers).toMatchObject({
        'content-type': PROBLEM_JSON,
        'retry-after': '2',
        'ratelimit-policy': '"hotspot";q=1;w=1',
        ratelimit: '"hotspot";r=0;t=2',
      });
      expect(JSON.parse(blocked.text)).toEqual({
        ...QUOTA_EXCEEDED,
        detail: HOTSPOT_DETAIL,
        code: 'ERR_HOT_PARAM_BLOCKED',
        resource: 'GET /users/:id',
        'violated-policies': ['hotspot'],
      });
      await request(server).get('/users/1').set('x-user', 'bob').expect(200);
      for (let i = 0; i < 3; i++) await request(server).get('/users/1').set('x-user', 'vip').expect(200);
      const vipBlocked = await request(server).get('/users/1').set('x-user', 'vip').expect(429);
      expect(vipBlocked.headers['ratelimit-policy']).toBe('"hotspot";q=3;w=1');
    });

    it('limits each value of a path parameter on a per-route hotspot rule', async () => {
      const server = await start({
        routes: [
          { method: 'GET', path: '/items/:id', guard: { hotParam: { param: 'id', threshold: 1 } }, handler: ok },
        ],
      });
      await request(server).get('/items/1').expect(200);
      const blocked = await request(server).get('/items/1').expect(429);
      expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', resource: 'GET /items/:id' });
      await request(server).get('/items/2').expect(200);
    });
  });

  describe(`${harness.name}: circuit breaking`, () => {
    it('opens on 5xx responses, answers 503 with Retry-After, and closes after a successful probe', async () => {
      let healthy = false;
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/upstream',
            guard: {
              circuitBreaker: {
                strategy: 'errorRatio',
                threshold: 0.5,
                minRequestAmount: 2,
                statIntervalMs: 60_000,
                retryTimeoutMs: 5000,
              },
            },
            handler: () => (healthy ? { body: { ok: true } } : { status: 502, body: { error: 'upstream failed' } }),
          },
        ],
      });
      await request(server).get('/upstream').expect(502);
      await request(server).get('/upstream').expect(502);
      const open = await request(server).get('/upstream').expect(503);
      expect(open.headers).toMatchObject({ 'content-type': PROBLEM_JSON, 'retry-after': '5' });
      expect(open.headers).not.toHaveProperty('ratelimit');
      expect(JSON.parse(open.text)).toEqual({
        ...REDUCED_CAPACITY,
        detail: OPEN_DETAIL,
        code: 'ERR_CIRCUIT_OPEN',
        resource: 'GET /upstream',
      });
      await clock.advance(5000);
      healthy = true;
      await request(server).get('/upstream').expect(200);
      expect(fg.circuitState('GET /upstream')[0]!.state).toBe('closed');
      await request(server).get('/upstream').expect(200);
    });

    it('opens on slow responses timed to the response’s finish, and recovers through a probe', async () => {
      let slow = true;
      const server = await start({
        options: {
          routes: {
            'GET /slow': {
              circuitBreaker: {
                strategy: 'slowRequestRatio',
                maxAllowedRtMs: 500,
                threshold: 0.5,
                minRequestAmount: 2,
                statIntervalMs: 60_000,
                retryTimeoutMs: 3000,
              },
            },
          },
        },
        routes: [
          {
            method: 'GET',
            path: '/slow',
            handler: async () => {
              if (slow) await clock.advance(600);
              return { body: { ok: true } };
            },
          },
        ],
      });
      await request(server).get('/slow').expect(200);
      await request(server).get('/slow').expect(200);
      const open = await request(server).get('/slow').expect(503);
      expect(open.headers['retry-after']).toBe('3');
      expect(JSON.parse(open.text)).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', resource: 'GET /slow' });
      await clock.advance(3000);
      slow = false;
      await request(server).get('/slow').expect(200);
      expect(fg.circuitState('GET /slow')[0]!.state).toBe('closed');
    });

    it('reopens when the probe fails', async () => {
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/down',
            guard: {
              circuitBreaker: {
                strategy: 'errorCount',
                threshold: 1,
                minRequestAmount: 1,
                statIntervalMs: 60_000,
                retryTimeoutMs: 2000,
              },
            },
            handler: () => ({ status: 500, body: { error: 'down' } }),
          },
        ],
      });
      await request(server).get('/down').expect(500);
      await request(server).get('/down').expect(500);
      await request(server).get('/down').expect(503);
      await clock.advance(2000);
      await request(server).get('/down').expect(500);
      expect(fg.circuitState('GET /down')[0]!.state).toBe('open');
      await request(server).get('/down').expect(503);
    });
  });

  describe(`${harness.name}: fallbacks`, () => {
    it('answers a block with the route’s fallback, and onBlock sees the block', async () => {
      const seen: string[] = [];
      const server = await start({
        options: {
          onBlock: (error: BlockError) => seen.push(`${error.code} ${error.resource}`),
          routes: { 'GET /cached': { rateLimit: { threshold: 0 }, fallback: () => ({ body: { cached: true } }) } },
        },
        routes: [{ method: 'GET', path: '/cached', handler: ok }],
      });
      await request(server).get('/cached').expect(200, { cached: true });
      expect(seen).toEqual(['ERR_FLOW_BLOCKED GET /cached']);
    });

    it('answers with the middleware’s own fallback when the route has none', async () => {
      const server = await start({
        options: {
          fallback: (error: BlockError) => ({ status: 503, body: { busy: error.resource } }),
          routes: { 'GET /plain': { rateLimit: { threshold: 0 } } },
        },
        routes: [{ method: 'GET', path: '/plain', handler: ok }],
      });
      await request(server).get('/plain').expect(503, { busy: 'GET /plain' });
    });

    it('answers an open circuit with a per-route fallback', async () => {
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/feed',
            guard: {
              circuitBreaker: {
                strategy: 'errorCount',
                threshold: 0,
                minRequestAmount: 1,
                statIntervalMs: 60_000,
                retryTimeoutMs: 5000,
              },
              fallback: (error) => ({ body: { cached: true, code: error.code } }),
            },
            handler: () => ({ status: 500, body: { error: 'down' } }),
          },
        ],
      });
      await request(server).get('/feed').expect(500);
      await request(server).get('/feed').expect(200, { cached: true, code: 'ERR_CIRCUIT_OPEN' });
    });

    it('answers 500 through the framework when a fallback throws, and leaks nothing', async () => {
      const failure = new Error('fallback failed');
      const server = await start({
        options: {
          routes: {
            '*': { rateLimit: { threshold: 100 } },
            'GET /x': {
              rateLimit: { threshold: 0 },
              fallback: () => {
                throw failure;
              },
            },
          },
        },
        routes: [{ method: 'GET', path: '/x', handler: ok }],
      });
      await request(server).get('/x').expect(500);
      expect(app!.errors).toContain(failure);
      await until(() => concurrency('* /*') === 0, 'the global entry to exit');
      expect(fg.stats('* /*')!.lastSecond.error).toBe(0);
    });
  });

  describe(`${harness.name}: errors`, () => {
    it('answers a block thrown by a decorated service method like a middleware block', async () => {
      class UserService {
        @RateLimit({ threshold: 1, floodgate: fg, resource: 'UserService.lookup' })
        lookup(id: string): { id: string } {
          return { id };
        }
      }
      const users = new UserService();
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/profile/:id',
            guard: {
              circuitBreaker: {
                strategy: 'errorCount',
                threshold: 0,
                minRequestAmount: 1,
                statIntervalMs: 60_000,
                retryTimeoutMs: 5000,
              },
            },
            handler: (req) => ({ body: users.lookup(req.params.id!) }),
          },
        ],
      });
      await request(server).get('/profile/1').expect(200, { id: '1' });
      const blocked = await request(server).get('/profile/1').expect(429);
      expect(blocked.headers).toMatchObject({ 'content-type': PROBLEM_JSON, 'ratelimit-policy': '"flow";q=1;w=1' });
      expect(JSON.parse(blocked.text)).toEqual({
        ...QUOTA_EXCEEDED,
        detail: FLOW_DETAIL,
        code: 'ERR_FLOW_BLOCKED',
        resource: 'UserService.lookup',
        'violated-policies': ['flow'],
      });
      expect(app!.errors).toEqual([]);
      expect(fg.circuitState('GET /profile/:id')[0]!.state).toBe('closed');
    });

    it('sends a throwing handler’s error to the framework’s error handling, counts it, and exits', async () => {
      const failure = new Error('handler failed');
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/boom',
            guard: { rateLimit: { threshold: 10 } },
            handler: () => {
              throw failure;
            },
          },
        ],
      });
      await request(server).get('/boom').expect(500);
      expect(app!.errors).toEqual([failure]);
      await until(() => concurrency('GET /boom') === 0, 'the entry to exit');
      expect(fg.stats('GET /boom')!.lastSecond.error).toBe(1);
    });

    it('answers 500 through the framework when the origin function throws, entering nothing', async () => {
      const failure = new Error('no origin');
      const server = await start({
        options: {
          origin: () => {
            throw failure;
          },
          routes: { '*': { rateLimit: { threshold: 100 } } },
        },
        routes: [{ method: 'GET', path: '/a', handler: ok }],
      });
      await request(server).get('/a').expect(500);
      expect(app!.errors).toContain(failure);
      expect(fg.stats('* /*')?.lastSecond.pass ?? 0).toBe(0);
      expect(concurrency('* /*')).toBe(0);
    });

    it('exits a request whose client leaves: concurrency goes back to 0', async () => {
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/hang',
            guard: { rateLimit: { metric: 'concurrency', threshold: 5 } },
            handler: async () => {
              await clock.sleep(60_000);
              return { body: { late: true } };
            },
          },
        ],
      });
      const client = rawGet(server, '/hang');
      await until(
        () => concurrency('GET /hang') === 1 && clock.pendingSleeps === 1,
        'the request to reach its handler',
      );
      client.leave();
      await until(() => concurrency('GET /hang') === 0, 'the aborted request to exit');
      expect(fg.stats('GET /hang')!.lastSecond.error).toBe(0);
      await clock.advance(60_000);
    });
  });

  describe(`${harness.name}: throttling`, () => {
    const throttled = (handled: { count: number }): Omit<AppSpec, 'floodgate'> => ({
      routes: [
        {
          method: 'GET',
          path: '/paced',
          guard: { rateLimit: { threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 } },
          handler: () => {
            handled.count++;
            return { body: { n: handled.count } };
          },
        },
      ],
    });

    it('queues a request through the clock until its turn', async () => {
      const handled = { count: 0 };
      const server = await start(throttled(handled));
      await request(server).get('/paced').expect(200);
      const queued = rawGet(server, '/paced');
      await until(() => clock.pendingSleeps === 1, 'the request to queue');
      expect(handled.count).toBe(1);
      await clock.advance(1000);
      await expect(queued.answered).resolves.toBe(200);
      expect(handled.count).toBe(2);
    });

    it('takes a client that leaves out of the queue, giving its turn to the next', async () => {
      const handled = { count: 0 };
      const server = await start(throttled(handled));
      await request(server).get('/paced').expect(200);
      const leaving = rawGet(server, '/paced');
      await until(() => clock.pendingSleeps === 1, 'the request to queue');
      leaving.leave();
      await until(() => clock.pendingSleeps === 0, 'the request to leave the queue');
      const next = rawGet(server, '/paced');
      await until(() => clock.pendingSleeps === 1, 'the next request to queue');
      await clock.advance(1000);
      await expect(next.answered).resolves.toBe(200);
      expect(handled.count).toBe(2);
    });
  });

  describe(`${harness.name}: a bulkhead's queue (#26)`, () => {
    it('takes a client that leaves out of the queue: its place goes to the next, and the slot is handed on', async () => {
      const gates: (() => void)[] = [];
      let handled = 0;
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/held',
            guard: {
              rateLimit: { metric: 'concurrency', threshold: 1, maxQueueLength: 1, maxQueueingTimeMs: 5000 },
            },
            handler: async () => {
              handled++;
              await new Promise<void>((resolve) => gates.push(resolve));
              return { body: { n: handled } };
            },
          },
        ],
      });
      const first = rawGet(server, '/held');
      await until(() => gates.length === 1, 'the first request to reach its handler');
      const leaving = rawGet(server, '/held');
      await until(() => clock.pendingSleeps === 1, 'the second request to queue');
      leaving.leave();
      await until(() => clock.pendingSleeps === 0, 'the leaving request to leave the queue');
      // The queue holds one: had the leaver kept its place, this request would be refused.
      const next = rawGet(server, '/held');
      await until(() => clock.pendingSleeps === 1, 'the next request to take the place');
      gates.shift()!();
      await expect(first.answered).resolves.toBe(200);
      await until(() => gates.length === 1, 'the slot to be handed to the next request');
      gates.shift()!();
      await expect(next.answered).resolves.toBe(200);
      expect(handled).toBe(2);
      await until(() => concurrency('GET /held') === 0, 'every slot to be given back');
    });
  });

  describe(`${harness.name}: extreme numbers (#24)`, () => {
    it.each([1e-306, 5e-324, 1e-310, 1e-300])(
      'refuses a throttle route of %s calls per second at start-up, naming threshold, instead of admitting every queued request',
      async (threshold) => {
        const rateLimit = { threshold, behavior: 'throttle', maxQueueingTimeMs: 5000 };
        await expect(
          harness.start({
            floodgate: fg,
            options: { routes: { 'GET /paced': { rateLimit } } },
            routes: [{ method: 'GET', path: '/paced', handler: ok }],
          }),
        ).rejects.toMatchObject({
          code: 'ERR_INVALID_RULE',
          message: expect.stringContaining(`routes['GET /paced'].rateLimit.threshold: must be 0 or at least`),
        });
      },
    );

    it('admits one of 50 requests at the slowest pace, answering the rest 429 with a whole Retry-After', async () => {
      let handled = 0;
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/paced',
            guard: { rateLimit: { threshold: 1000 / MAX_DURATION_MS, behavior: 'throttle', maxQueueingTimeMs: 500 } },
            handler: () => {
              handled++;
              return { body: { ok: true } };
            },
          },
        ],
      });
      const answers = await Promise.all(Array.from({ length: 50 }, () => request(server).get('/paced')));
      expect(handled).toBe(1);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(49);
      for (const answer of refused) {
        // One call per 2147483647 ms, less the 500 ms queue: 2147483.147 s, rounded up.
        expect(answer.headers).toMatchObject({
          'retry-after': '2147484',
          'ratelimit-policy': '"flow";q=0;w=1',
          ratelimit: '"flow";r=0;t=2147484',
        });
      }
    });

    it('answers a hotspot value paced over 2^53 − 1 ms with Retry-After and RateLimit numbers capped at MAX_HEADER_VALUE', async () => {
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/users/:id',
            guard: {
              hotParam: { param: 'id', threshold: 1, behavior: 'throttle', durationMs: Number.MAX_SAFE_INTEGER },
            },
            handler: ok,
          },
        ],
      });
      await request(server).get('/users/1').expect(200);
      const blocked = await request(server).get('/users/1').expect(429);
      expect(blocked.headers).toMatchObject({
        'retry-after': String(MAX_HEADER_VALUE),
        'ratelimit-policy': `"hotspot";q=1;w=${MAX_HEADER_VALUE}`,
        ratelimit: `"hotspot";r=0;t=${MAX_HEADER_VALUE}`,
      });
    });

    it.each(['draft-6', 'draft-7', 'draft-8'] as const)(
      'describes a quota of 2^53 − 1 on passing responses with whole numbers within MAX_HEADER_VALUE (%s)',
      async (draft) => {
        const server = await start({
          options: {
            headers: { draft, onPass: true },
            routes: { 'GET /a': { rateLimit: { threshold: Number.MAX_SAFE_INTEGER } } },
          },
          routes: [{ method: 'GET', path: '/a', handler: ok }],
        });
        const passed = await request(server).get('/a').expect(200);
        const numbers: string[] = [];
        expect(badHeaderNumbers(passed.headers, numbers)).toEqual([]);
        expect(numbers.length).toBeGreaterThanOrEqual(3);
        expect(numbers).toContain(String(MAX_HEADER_VALUE));
      },
    );
  });

  describe(`${harness.name}: clients that leave`, () => {
    const slowRoute = (limit: 'guard' | 'pattern', gate: { open: boolean }): Omit<AppSpec, 'floodgate'> => {
      const rule = { rateLimit: { metric: 'concurrency', threshold: 20 } };
      const route: RouteSpec = {
        method: 'GET',
        path: '/report',
        ...(limit === 'guard' ? { guard: rule } : {}),
        handler: async () => {
          if (!gate.open) await clock.sleep(60_000);
          return { body: { ok: true } };
        },
      };
      return { ...(limit === 'pattern' ? { options: { routes: { 'GET /report': rule } } } : {}), routes: [route] };
    };

    it.each(['guard', 'pattern'] as const)(
      'gives back every slot of pipelined requests whose client leaves (limit by %s)',
      async (limit) => {
        const gate = { open: false };
        const server = await start(slowRoute(limit, gate));
        const five = rawRequest('GET', '/report').repeat(5);
        const connections = Array.from({ length: 6 }, () => openRaw(server, five));
        await until(
          () => concurrency('GET /report') === 20 && fg.stats('GET /report')!.lastSecond.block === 10,
          'every pipelined request to be admitted or refused',
        );
        for (const connection of connections) connection.destroy();
        await until(() => concurrency('GET /report') === 0, 'the slots of the requests left behind to be given back');
        gate.open = true;
        const statuses = await Promise.all(
          Array.from({ length: 10 }, () =>
            request(server)
              .get('/report')
              .then((r) => r.status),
          ),
        );
        expect(statuses).toEqual(Array<number>(10).fill(200));
        await clock.advance(60_000);
        expect(concurrency('GET /report')).toBe(0);
      },
    );

    it('gives back the slots of pipelined requests with bodies, read or not, whose client leaves', async () => {
      const server = await start({
        routes: [
          {
            method: 'POST',
            path: '/upload',
            guard: { rateLimit: { metric: 'concurrency', threshold: 10 } },
            handler: async () => {
              await clock.sleep(60_000);
              return { body: { ok: true } };
            },
          },
        ],
      });
      const three = rawRequest('POST', '/upload', { 'Content-Type': 'application/json' }, '{"a":1}').repeat(3);
      const connections = Array.from({ length: 3 }, () => openRaw(server, three));
      await until(() => concurrency('POST /upload') === 9, 'every pipelined request to be admitted');
      for (const connection of connections) connection.destroy();
      await until(() => concurrency('POST /upload') === 0, 'the slots to be given back');
      await clock.advance(60_000);
    });

    it('exits the entry of a request once, when the client leaves and the handler answers later', async () => {
      const server = await start(slowRoute('guard', { open: false }));
      const connection = openRaw(server, rawRequest('GET', '/report'));
      await until(
        () => concurrency('GET /report') === 1 && clock.pendingSleeps === 1,
        'the request to reach its handler',
      );
      connection.destroy();
      await until(() => concurrency('GET /report') === 0, 'the entry to exit');
      expect(fg.totals('GET /report')).toMatchObject({ pass: 1, success: 1, error: 0 });
      await clock.advance(60_000);
      await until(() => clock.pendingSleeps === 0, 'the handler to answer');
      expect(concurrency('GET /report')).toBe(0);
      expect(fg.totals('GET /report')).toMatchObject({ pass: 1, success: 1, error: 0 });
    });
  });

  describe(`${harness.name}: route matching`, () => {
    const counted =
      (handled: Map<string, number>, name: string): Handler =>
      () => {
        handled.set(name, (handled.get(name) ?? 0) + 1);
        return { body: { ok: true } };
      };
    // Each spelling is sent 10 times within one second: the handler runs no more than the threshold.
    const spellings: readonly (readonly [string, string])[] = [
      ['POST', '/login'],
      ['POST', '/LOGIN'],
      ['POST', '/%6Cogin'],
      ['POST', '/%6cOGIN/'],
      ['POST', '//login'],
      ['POST', '/login?x=1'],
      ['POST', '/login#x'],
      ['POST', 'http://test/LOGIN'],
      ['OPTIONS', '/login'],
      ['GET', '/export'],
      ['GET', '/Export'],
      ['HEAD', '/export'],
      ['HEAD', '/EXPORT/'],
      ['GET', '/%65xport'],
    ];

    it.each(['guard', 'pattern'] as const)(
      'counts every spelling of a limited path against its one budget (limit by %s)',
      async (limit) => {
        const handled = new Map<string, number>();
        const login = { rateLimit: { threshold: 3 } };
        const exporting = { rateLimit: { threshold: 2 } };
        const server = await start({
          ...(limit === 'pattern' ? { options: { routes: { 'POST /login': login, 'GET /export': exporting } } } : {}),
          routes: [
            {
              method: 'POST',
              path: '/login',
              ...(limit === 'guard' ? { guard: login } : {}),
              handler: counted(handled, 'login'),
            },
            {
              method: 'GET',
              path: '/export',
              ...(limit === 'guard' ? { guard: exporting } : {}),
              handler: counted(handled, 'export'),
            },
          ],
        });
        for (const [method, target] of spellings) for (let i = 0; i < 10; i++) await sendRaw(server, method, target);
        expect(handled.get('login')).toBe(3);
        expect(handled.get('export')).toBe(2);
      },
    );

    it('guards HEAD against the GET budget, 10 GET and 10 HEAD running a 2/s handler twice', async () => {
      const handled = new Map<string, number>();
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/export',
            guard: { rateLimit: { threshold: 2 } },
            handler: counted(handled, 'export'),
          },
        ],
      });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++)
        statuses.push(await sendRaw(server, 'GET', '/export'), await sendRaw(server, 'HEAD', '/export'));
      expect(handled.get('export')).toBe(2);
      expect(statuses.filter((status) => status === 429)).toHaveLength(18);
      expect(fg.stats('HEAD /export')).toBeUndefined();
    });

    it('gives HEAD a budget of its own when a pattern names HEAD', async () => {
      const server = await start({
        options: {
          routes: { 'GET /export': { rateLimit: { threshold: 1 } }, 'HEAD /export': { rateLimit: { threshold: 5 } } },
        },
        routes: [{ method: 'GET', path: '/export', handler: ok }],
      });
      expect(await sendRaw(server, 'GET', '/export')).toBe(200);
      for (let i = 0; i < 5; i++) expect(await sendRaw(server, 'HEAD', '/export')).toBe(200);
      expect(await sendRaw(server, 'HEAD', '/export')).toBe(429);
    });
  });

  describe(`${harness.name}: refusals give back what they took`, () => {
    const byUser = (req: { headers: Record<string, unknown> }): unknown => req.headers['x-user'];

    it.each(['guard', 'pattern'] as const)(
      'spends nothing of the global limit on an abusive user the per-user limit refuses (limit by %s)',
      async (limit) => {
        const perUser = { hotParam: { param: byUser, threshold: 5 } };
        const server = await start({
          options: {
            routes: {
              '*': { rateLimit: { threshold: 50 } },
              ...(limit === 'pattern' ? { 'GET /users/:id': perUser } : {}),
            },
          },
          routes: [
            { method: 'GET', path: '/users/:id', ...(limit === 'guard' ? { guard: perUser } : {}), handler: ok },
          ],
        });
        const statuses: number[] = [];
        for (let batch = 0; batch < 10; batch++) {
          const answers = await Promise.all(
            Array.from({ length: 30 }, () => request(server).get('/users/1').set('x-user', 'mallory')),
          );
          statuses.push(...answers.map((answer) => answer.status));
        }
        expect(statuses.filter((status) => status === 200)).toHaveLength(5);
        await request(server).get('/users/2').set('x-user', 'alice').expect(200);
        expect(fg.stats('* /*')!.lastSecond.pass).toBe(6);
        expect(concurrency('* /*')).toBe(0);
      },
    );

    it('gives back the global slot of a request whose param function throws', async () => {
      const failure = new Error('no user');
      const server = await start({
        options: {
          routes: {
            '*': { rateLimit: { metric: 'concurrency', threshold: 1 } },
            'GET /a': {
              hotParam: {
                param: () => {
                  throw failure;
                },
                threshold: 1,
              },
            },
          },
        },
        routes: [{ method: 'GET', path: '/a', handler: ok }],
      });
      await request(server).get('/a').expect(500);
      expect(app!.errors).toContain(failure);
      expect(fg.stats('* /*')?.lastSecond.pass ?? 0).toBe(0);
      expect(concurrency('* /*')).toBe(0);
    });
  });

  describe(`${harness.name}: timeouts`, () => {
    it('answers 503 when a route’s timeoutMs passes, recording a failure, and holds the slot until the handler settles', async () => {
      const server = await start({
        routes: [
          {
            method: 'GET',
            path: '/slow',
            guard: {
              circuitBreaker: {
                strategy: 'errorCount',
                threshold: 0,
                minRequestAmount: 1,
                statIntervalMs: 60_000,
                retryTimeoutMs: 5000,
              },
              timeoutMs: 1000,
            },
            handler: async () => {
              await clock.sleep(5000);
              return { body: { late: true } };
            },
          },
        ],
      });
      const client = openRaw(server, rawRequest('GET', '/slow'));
      await until(() => clock.pendingSleeps === 2, 'the request to reach its handler');
      await clock.advance(1000);
      await until(() => client.statuses.length === 1, 'the timeout to answer');
      expect(client.statuses).toEqual([503]);
      expect(client.received()).toContain('application/problem+json');
      expect(JSON.parse(client.received().slice(client.received().indexOf('\r\n\r\n') + 4))).toEqual({
        ...REDUCED_CAPACITY,
        detail: 'The request did not complete within the time allowed to this resource.',
        code: 'ERR_TIMEOUT',
        resource: 'GET /slow',
      });
      expect(fg.stats('GET /slow')!.lastSecond.error).toBe(1);
      expect(fg.circuitState('GET /slow')[0]!.state).toBe('open');
      expect(concurrency('GET /slow')).toBe(1);
      await clock.advance(4000);
      await until(() => concurrency('GET /slow') === 0, 'the handler to settle and give its slot back');
      expect(app!.errors).toEqual([]);
      client.destroy();
      await request(server).get('/slow').expect(503);
    });

    it('answers in time without a timeout', async () => {
      const server = await start({
        options: { routes: { 'GET /quick': { rateLimit: { threshold: 10 }, timeoutMs: 1000 } } },
        routes: [{ method: 'GET', path: '/quick', handler: ok }],
      });
      await request(server).get('/quick').expect(200, { ok: true });
      expect(clock.pendingSleeps).toBe(0);
      expect(fg.stats('GET /quick')!.lastSecond.error).toBe(0);
    });
  });

  describe(`${harness.name}: RateLimit headers on passing responses`, () => {
    it('describes the tightest quota left when asked to', async () => {
      const server = await start({
        options: {
          headers: { onPass: true },
          routes: { '*': { rateLimit: { threshold: 5 } }, 'GET /a': { rateLimit: { threshold: 2 } } },
        },
        routes: [
          { method: 'GET', path: '/a', handler: ok },
          { method: 'GET', path: '/b', handler: ok },
        ],
      });
      const first = await request(server).get('/a').expect(200);
      expect(first.headers).toMatchObject({ 'ratelimit-policy': '"flow";q=2;w=1', ratelimit: '"flow";r=1;t=1' });
      expect((await request(server).get('/a').expect(200)).headers.ratelimit).toBe('"flow";r=0;t=1');
      expect((await request(server).get('/b').expect(200)).headers).toMatchObject({
        'ratelimit-policy': '"flow";q=5;w=1',
        ratelimit: '"flow";r=2;t=1',
      });
    });
  });

  describe(`${harness.name}: bad options`, () => {
    const routes = [{ method: 'GET' as const, path: '/a', handler: ok }];

    it('refuses an unknown option, naming it', async () => {
      await expect(harness.start({ floodgate: fg, options: { routez: {} }, routes })).rejects.toMatchObject({
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining('routez: unknown field'),
      });
    });

    it('refuses a route pattern that does not parse, naming it', async () => {
      await expect(
        harness.start({ floodgate: fg, options: { routes: { 'GET users': {} } }, routes }),
      ).rejects.toMatchObject({
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining(`routes['GET users']: is not a valid route pattern`),
      });
    });

    it('refuses an invalid rule of a route pattern, naming its field', async () => {
      await expect(
        harness.start({ floodgate: fg, options: { routes: { 'GET /a': { rateLimit: { threshold: -1 } } } }, routes }),
      ).rejects.toMatchObject({
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining(`routes['GET /a'].rateLimit.threshold: must be a finite number >= 0, got -1`),
      });
    });

    it('refuses an invalid per-route rule, naming its field', async () => {
      await expect(
        harness.start({
          floodgate: fg,
          routes: [
            {
              method: 'GET',
              path: '/a',
              guard: { circuitBreaker: { strategy: 'errorRatio', threshold: 2, retryTimeoutMs: 1000 } },
              handler: ok,
            },
          ],
        }),
      ).rejects.toMatchObject({
        code: 'ERR_INVALID_RULE',
        message: expect.stringMatching(/threshold: must be .*got 2/),
      });
    });

    it('refuses an unknown per-route option, naming it', async () => {
      await expect(
        harness.start({
          floodgate: fg,
          routes: [{ method: 'GET', path: '/a', guard: { rateLimit: { threshold: 1, burst: 2 } }, handler: ok }],
        }),
      ).rejects.toMatchObject({
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining('burst: unknown field'),
      });
    });

    it.each([
      ['GTE /users/:id', 'is not an HTTP method'],
      ['GET /users/{id}', "write a parameter as ':id'"],
    ])('refuses the pattern %j, which could never match, naming it', async (pattern, reason) => {
      await expect(
        harness.start({ floodgate: fg, options: { routes: { [pattern]: { rateLimit: { threshold: 1 } } } }, routes }),
      ).rejects.toMatchObject({
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining(`routes['${pattern}']: is not a valid route pattern`),
      });
      await expect(harness.start({ floodgate: fg, options: { routes: { [pattern]: {} } }, routes })).rejects.toThrow(
        reason,
      );
    });

    it('refuses a per-route hotspot param the route does not have, at the latest on its first request', async () => {
      const spec = {
        floodgate: fg,
        routes: [
          {
            method: 'GET' as const,
            path: '/users/:id',
            guard: { hotParam: { param: 'userId', threshold: 1 } },
            handler: ok,
          },
        ],
      };
      const expected = {
        code: 'ERR_INVALID_RULE',
        message: expect.stringContaining(`param: "userId" is not a parameter of the route (it has: 'id')`),
      };
      let started: Started;
      try {
        started = await harness.start(spec);
      } catch (error) {
        expect(error).toMatchObject(expected);
        return;
      }
      app = started;
      await new Promise<void>((resolve) => started.server.listen(0, '127.0.0.1', resolve));
      await request(started.server).get('/users/1').expect(500);
      await request(started.server).get('/users/1').expect(500);
      expect(started.errors).toEqual([expect.objectContaining(expected), expect.objectContaining(expected)]);
      expect(fg.getRules().hotParams).toEqual([]);
    });

    it('declares nothing when it refuses', async () => {
      await expect(
        harness.start({
          floodgate: fg,
          options: {
            routes: { 'GET /a': { rateLimit: { threshold: 1 } }, 'GET /b': { rateLimit: { threshold: -1 } } },
          },
          routes,
        }),
      ).rejects.toThrow();
      expect(fg.getRules().flow).toEqual([]);
    });
  });
}
