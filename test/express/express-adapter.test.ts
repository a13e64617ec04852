import http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { blockErrorHandler, hotParam, ipKey, rateLimit, resilience } from '@floodgate/express';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { BIG_ANSWER, openRaw, rawRequest } from '../http/raw-client';
import { SLOW_RATIO } from '../http/slow-clients';
import { settled } from '../support/settled';
import { until } from '../support/until';

describe('@floodgate/express', () => {
  let fg: Floodgate;

  beforeEach(() => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
  });

  it('names a per-route resource by the router’s mount path and the route’s path', async () => {
    const app = express();
    const api = express.Router();
    api.get('/users/:id', rateLimit({ floodgate: fg, threshold: 1 }), (_req, res) => void res.json({ ok: true }));
    app.use('/api', api);
    await request(app).get('/api/users/1').expect(200);
    const blocked = await request(app).get('/api/users/2').expect(429);
    expect(JSON.parse(blocked.text).resource).toBe('GET /api/users/:id');
  });

  it('guards a request that no Express app handed over (a bare router), routing letter case together', async () => {
    const guard = resilience({ floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 1 } } } });
    // What the router package alone sets on a Node request: originalUrl, and no app.
    const server = http.createServer((req, res) => {
      Object.assign(req, { originalUrl: req.url });
      guard(
        req as Request,
        res as Response,
        (err?: unknown) => void res.writeHead(err === undefined ? 200 : 500).end(),
      );
    });
    const codes = [(await request(server).get('/a')).status, (await request(server).get('/A')).status];
    expect(codes).toEqual([200, 429]);
  });

  it('matches route patterns on the full path, whatever the mount point', async () => {
    const app = express();
    app.use('/api', resilience({ floodgate: fg, routes: { 'GET /api/ping': { rateLimit: { threshold: 0 } } } }));
    app.get('/api/ping', (_req, res) => void res.json({ ok: true }));
    await request(app).get('/api/ping').expect(429);
  });

  it('sends a per-route middleware used outside a route to next(err), saying why', async () => {
    const app = express();
    const errors: unknown[] = [];
    app.use(rateLimit({ floodgate: fg, threshold: 1 }));
    app.get('/a', (_req, res) => void res.json({ ok: true }));
    app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
      errors.push(err);
      res.status(500).end();
    });
    await request(app).get('/a').expect(500);
    expect(String(errors[0])).toContain('rateLimit() cannot tell which route this request is on');
  });

  it('guards a per-route middleware used outside a route when it is given a resource', async () => {
    const app = express();
    app.use(rateLimit({ floodgate: fg, threshold: 1, resource: 'everything' }));
    app.get('/a', (_req, res) => void res.json({ ok: true }));
    await request(app).get('/a').expect(200);
    expect(JSON.parse((await request(app).get('/a').expect(429)).text).resource).toBe('everything');
  });

  it('refuses invalid per-route options when the middleware is created', () => {
    expect(() => rateLimit({ floodgate: fg, threshold: -1 })).toThrow(
      'Invalid rateLimit() options: threshold: must be a finite number >= 0, got -1',
    );
  });

  it('passes errors that are not blocks on to the next error handler', async () => {
    const app = express();
    app.get('/a', () => {
      throw new Error('boom');
    });
    app.use(blockErrorHandler());
    app.use(
      (err: Error, _req: Request, res: Response, _next: NextFunction) =>
        void res.status(500).json({ seen: err.message }),
    );
    await request(app).get('/a').expect(500, { seen: 'boom' });
  });

  it('refuses an unknown blockErrorHandler option', () => {
    expect(() => blockErrorHandler({ origin: () => '' } as never)).toThrow(
      'Invalid blockErrorHandler() options: origin: unknown field (allowed: floodgate, onBlock, fallback, headers)',
    );
  });

  describe('ipKey', () => {
    function appKeyedByIp(trustProxy: boolean): express.Express {
      const app = express();
      if (trustProxy) app.set('trust proxy', 1);
      app.get(
        '/a',
        hotParam({ floodgate: fg, param: ipKey, threshold: 1 }),
        (_req, res) => void res.json({ ok: true }),
      );
      return app;
    }

    it('keys a client by the address trust proxy gives, IPv4-mapped read as IPv4', async () => {
      const app = appKeyedByIp(true);
      await request(app).get('/a').set('X-Forwarded-For', '::ffff:203.0.113.9').expect(200);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.9').expect(429);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.10').expect(200);
    });

    it('keys IPv6 clients by their /56', async () => {
      const app = appKeyedByIp(true);
      await request(app).get('/a').set('X-Forwarded-For', '2001:db8:0:1aa::1').expect(200);
      await request(app).get('/a').set('X-Forwarded-For', '2001:db8:0:1bb::2').expect(429);
      await request(app).get('/a').set('X-Forwarded-For', '2001:db8:0:200::1').expect(200);
    });

    it('ignores X-Forwarded-For without trust proxy', async () => {
      const app = appKeyedByIp(false);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.9').expect(200);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.10').expect(429);
    });

    it('names the origin for authority rules', async () => {
      fg.loadAuthorityRules([{ resource: 'GET /a', strategy: 'deny', origins: ['203.0.113.9'] }]);
      const app = express();
      app.set('trust proxy', 1);
      app.use(resilience({ floodgate: fg, origin: ipKey, routes: { 'GET /a': {} } }));
      app.get('/a', (_req, res) => void res.json({ ok: true }));
      await request(app).get('/a').set('X-Forwarded-For', '::ffff:203.0.113.9').expect(403);
      await request(app).get('/a').set('X-Forwarded-For', '198.51.100.1').expect(200);
    });
  });

  it('follows the app’s case sensitive routing: another letter case is another path', async () => {
    const app = express();
    app.enable('case sensitive routing');
    app.use(resilience({ floodgate: fg, routes: { 'POST /login': { rateLimit: { threshold: 1 } } } }));
    app.post('/login', (_req, res) => void res.json({ ok: true }));
    await request(app).post('/LOGIN').expect(404);
    await request(app).post('/login').expect(200);
    await request(app).post('/login').expect(429);
  });

  it('gives a route’s own HEAD handler its own resource', async () => {
    const app = express();
    app.head('/export', rateLimit({ floodgate: fg, threshold: 1 }), (_req, res) => void res.end());
    app.get('/export', rateLimit({ floodgate: fg, threshold: 1 }), (_req, res) => void res.json({ ok: true }));
    await request(app).get('/export').expect(200);
    await request(app).head('/export').expect(200);
    await request(app).head('/export').expect(429);
    expect(fg.stats('HEAD /export')!.lastSecond.pass).toBe(1);
  });

  it('answers a block without an ETag, with its Content-Length', async () => {
    const app = express();
    app.get('/a', rateLimit({ floodgate: fg, threshold: 0 }), (_req, res) => void res.json({ ok: true }));
    const blocked = await request(app).get('/a').expect(429);
    expect(blocked.headers.etag).toBeUndefined();
    expect(blocked.headers['content-length']).toBe(String(Buffer.byteLength(blocked.text)));
  });

  describe('the end of a response', () => {
    /** Sends `count` GETs of `/a` one after another on one keep-alive connection; resolves with their statuses. */
    async function oneByOne(app: express.Express, count: number): Promise<number[]> {
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const statuses: number[] = [];
      for (let i = 0; i < count; i++) {
        statuses.push(
          await new Promise<number>((resolve, reject) => {
            const req = http.get({ agent, host: '127.0.0.1', port, path: '/a' }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode!));
            });
            req.on('error', reject);
          }),
        );
      }
      agent.destroy();
      server.close();
      return statuses;
    }

    /** An app whose one route takes one request at a time, recording what listens to each response. */
    function oneAtATime(listening: number[], before?: express.RequestHandler): express.Express {
      const app = express();
      if (before !== undefined) app.use(before);
      app.use(
        resilience({ floodgate: fg, routes: { 'GET /a': { rateLimit: { metric: 'concurrency', threshold: 1 } } } }),
      );
      app.get('/a', (_req, res) => {
        listening.push(res.listenerCount('close') + res.listenerCount('prefinish'));
        res.json({ ok: true });
      });
      return app;
    }

    it('is heard through the app’s response prototype: nothing listens to the response', async () => {
      const listening: number[] = [];
      // A slot the end did not give back would refuse the next request on the connection.
      expect(await oneByOne(oneAtATime(listening), 3)).toEqual([200, 200, 200]);
      expect(listening).toEqual([0, 0, 0]);
      expect(fg.totals('GET /a')).toMatchObject({ pass: 3, success: 3, block: 0 });
    });

    it('is heard when the request leaves the mounted app that guarded it (Express gives back its parent’s prototype)', async () => {
      const app = express();
      const mounted = express();
      mounted.use(
        resilience({ floodgate: fg, routes: { 'GET /a': { rateLimit: { metric: 'concurrency', threshold: 1 } } } }),
      );
      app.use(mounted);
      app.get('/a', (_req, res) => void res.json({ ok: true }));
      expect(await oneByOne(app, 3)).toEqual([200, 200, 200]);
      expect(fg.totals('GET /a')).toMatchObject({ pass: 3, success: 3, block: 0 });
    });

    it('of a pipelined request, waiting behind another, is heard at its end() when it leaves the mounted app that guarded it', async () => {
      const app = express();
      const mounted = express();
      mounted.use(resilience({ floodgate: fg, routes: { 'GET /big': { circuitBreaker: SLOW_RATIO } } }));
      app.use(mounted);
      app.get('/big', (_req, res) => void res.json({ big: BIG_ANSWER }));
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      // Three requests at once, none of whose answers is read: the two behind the first never reach the socket.
      const client = openRaw(server, rawRequest('GET', '/big').repeat(3), { paused: true });
      try {
        await until(() => fg.totals('GET /big')?.pass === 3, 'the three requests to be admitted');
        // Recorded when their handlers answered, not when (if ever) the client lets them onto the socket.
        await settled(() => fg.totals('GET /big')?.success === 3, 'the three answers to be recorded');
      } finally {
        client.destroy();
        server.closeAllConnections();
        server.close();
      }
    });

    it('is listened to on a response with an emit of its own, which may call the emit it found before', async () => {
      const listening: number[] = [];
      // On the first request the wrapper calls EventEmitter's emit, not the prototype's.
      const wrapsEmit: express.RequestHandler = (_req, res, next) => {
        const emit = res.emit;
        res.emit = function (this: Response, ...args: Parameters<Response['emit']>) {
          return emit.apply(this, args);
        } as Response['emit'];
        next();
      };
      expect(await oneByOne(oneAtATime(listening, wrapsEmit), 3)).toEqual([200, 200, 200]);
      expect(listening).toEqual([2, 2, 2]);
      // Heard twice from the second request on (its listeners and the prototype), counted once.
      expect(fg.totals('GET /a')).toMatchObject({ pass: 3, success: 3, block: 0 });
      expect(fg.stats('GET /a')!.concurrency).toBe(0);
    });
  });
});
