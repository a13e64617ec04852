import Fastify, { type FastifyInstance } from 'fastify';
import request from 'supertest';
import fastifyFloodgateDefault, { fastifyFloodgate, ipKey } from '@floodgate/fastify';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

describe('fastifyFloodgate', () => {
  let app: FastifyInstance;
  let fg: Floodgate;

  beforeEach(() => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
    app = Fastify();
  });

  afterEach(async () => {
    await app.close();
  });

  it('is exported as default and by name, as a fastify-plugin for Fastify 5', () => {
    expect(fastifyFloodgateDefault).toBe(fastifyFloodgate);
    expect((fastifyFloodgate as unknown as Record<symbol, unknown>)[Symbol.for('plugin-meta')]).toMatchObject({
      name: '@floodgate/fastify',
      fastify: '5.x',
    });
  });

  it('decorates the instance with its engine', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    await app.ready();
    expect(app.floodgate).toBe(fg);
  });

  it('declares a route’s config under METHOD url, prefix included', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    await app.register(
      async (api) => {
        api.get('/users/:id', { config: { floodgate: { rateLimit: { threshold: 7 } } } }, async () => ({ ok: true }));
      },
      { prefix: '/api' },
    );
    await app.ready();
    expect(fg.getRules().flow.map((rule) => rule.resource)).toContain('GET /api/users/:id');
  });

  it('guards each method of a route with several methods as its own resource', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.route({
      method: ['GET', 'POST'],
      url: '/both',
      config: { floodgate: { rateLimit: { threshold: 1 } } },
      handler: async () => ({ ok: true }),
    });
    await app.ready();
    await request(app.server).get('/both').expect(200);
    await request(app.server).post('/both').expect(200);
    expect(JSON.parse((await request(app.server).get('/both').expect(429)).text).resource).toBe('GET /both');
  });

  it('leaves a route with config.floodgate false alone', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.get('/free', { config: { floodgate: false } }, async () => ({ ok: true }));
    await app.ready();
    await request(app.server).get('/free').expect(200);
    expect(fg.getRules().flow).toEqual([]);
  });

  it('refuses an invalid route config when the route is declared, naming the route and the field', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    expect(() =>
      app.get('/bad', { config: { floodgate: { rateLimit: { threshold: -1 } } } }, async () => ({ ok: true })),
    ).toThrow(
      'Invalid Floodgate route config on GET /bad: config.floodgate.rateLimit.threshold: must be a finite number >= 0, got -1',
    );
  });

  it('refuses an invalid route config of a plugin at ready()', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    void app.register(async (api) => {
      api.get('/bad', { config: { floodgate: { hotParam: { threshold: 1 } as never } } }, async () => ({ ok: true }));
    });
    await expect(app.ready()).rejects.toThrow('config.floodgate.hotParam.param: is required');
  });

  it('applies a global limit to requests no route matches', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg, routes: { '*': { rateLimit: { threshold: 1 } } } });
    await app.ready();
    await request(app.server).get('/nowhere').expect(404);
    await request(app.server).get('/nowhere').expect(429);
  });

  it('keeps a route’s own error handler for errors that are not blocks', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.get(
      '/own',
      {
        errorHandler: (_error, _request, reply) => {
          reply.code(418).send({ teapot: true });
        },
      },
      async () => {
        throw new Error('no coffee');
      },
    );
    await app.ready();
    await request(app.server).get('/own').expect(418, { teapot: true });
  });

  it('answers a block thrown in a handler even on a route with its own error handler', async () => {
    fg.loadFlowRules([{ resource: 'inner', threshold: 0 }]);
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.get('/inner', { errorHandler: (_e, _r, reply) => void reply.code(418).send({}) }, async () =>
      fg.entry('inner'),
    );
    await app.ready();
    const blocked = await request(app.server).get('/inner').expect(429);
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'inner' });
  });

  it('puts the HEAD route Fastify adds for a GET route on the GET route’s resource', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.get('/export', { config: { floodgate: { rateLimit: { threshold: 1 } } } }, async () => ({ ok: true }));
    await app.ready();
    await request(app.server).head('/export').expect(200);
    await request(app.server).get('/export').expect(429);
    expect(fg.getRules().flow.map((rule) => rule.resource)).toEqual(['GET /export']);
  });

  it('puts HEAD on the GET resource of a route with both methods', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.route({
      method: ['GET', 'HEAD'],
      url: '/both',
      config: { floodgate: { rateLimit: { threshold: 1 } } },
      handler: async () => ({ ok: true }),
    });
    await app.ready();
    await request(app.server).get('/both').expect(200);
    await request(app.server).head('/both').expect(429);
  });

  it('gives a HEAD route of its own its own resource', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    app.get(
      '/export',
      { exposeHeadRoute: false, config: { floodgate: { rateLimit: { threshold: 1 } } } },
      async () => ({ ok: true }),
    );
    app.head('/export', { config: { floodgate: { rateLimit: { threshold: 1 } } } }, async (_request, reply) =>
      reply.send(),
    );
    await app.ready();
    await request(app.server).get('/export').expect(200);
    await request(app.server).head('/export').expect(200);
    expect(
      fg
        .getRules()
        .flow.map((rule) => rule.resource)
        .sort(),
    ).toEqual(['GET /export', 'HEAD /export']);
  });

  it('matches route patterns case-insensitively when the router is, and ends paths at ; when it does', async () => {
    const loose = Fastify({ routerOptions: { caseSensitive: false, useSemicolonDelimiter: true } as never });
    try {
      await loose.register(fastifyFloodgate, {
        floodgate: fg,
        routes: { 'POST /login': { rateLimit: { threshold: 2 } } },
      });
      loose.post('/login', async () => ({ ok: true }));
      await loose.ready();
      await request(loose.server).post('/LOGIN').expect(200);
      await request(loose.server).post('/login;jsessionid=1').expect(200);
      await request(loose.server).post('/Login').expect(429);
    } finally {
      await loose.close();
    }
  });

  it('matches route patterns case-sensitively by default, as the router does', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg, routes: { 'POST /login': { rateLimit: { threshold: 1 } } } });
    app.post('/login', async () => ({ ok: true }));
    await app.ready();
    await request(app.server).post('/LOGIN').expect(404);
    await request(app.server).post('/login').expect(200);
  });

  it('refuses a route config whose hotspot param the route does not have', async () => {
    await app.register(fastifyFloodgate, { floodgate: fg });
    expect(() =>
      app.get('/users/:id', { config: { floodgate: { hotParam: { param: 'userId', threshold: 1 } } } }, async () => ({
        ok: true,
      })),
    ).toThrow(
      `Invalid Floodgate route config on GET /users/:id: config.floodgate.hotParam.param: "userId" is not a parameter of the route (it has: 'id')`,
    );
  });

  describe('ipKey', () => {
    async function appKeyedByIp(trustProxy: boolean): Promise<FastifyInstance> {
      const keyed = Fastify({ trustProxy });
      await keyed.register(fastifyFloodgate, { floodgate: fg });
      keyed.get('/a', { config: { floodgate: { hotParam: { param: ipKey, threshold: 1 } } } }, async () => ({
        ok: true,
      }));
      await keyed.ready();
      return keyed;
    }

    it('keys a client by the address trustProxy gives, IPv4-mapped read as IPv4, IPv6 by its /56', async () => {
      const keyed = await appKeyedByIp(true);
      try {
        await request(keyed.server).get('/a').set('X-Forwarded-For', '::ffff:203.0.113.9').expect(200);
        await request(keyed.server).get('/a').set('X-Forwarded-For', '203.0.113.9').expect(429);
        await request(keyed.server).get('/a').set('X-Forwarded-For', '2001:db8:0:1aa::1').expect(200);
        await request(keyed.server).get('/a').set('X-Forwarded-For', '2001:db8:0:1bb::2').expect(429);
      } finally {
        await keyed.close();
      }
    });

    it('ignores X-Forwarded-For without trustProxy', async () => {
      const keyed = await appKeyedByIp(false);
      try {
        await request(keyed.server).get('/a').set('X-Forwarded-For', '203.0.113.9').expect(200);
        await request(keyed.server).get('/a').set('X-Forwarded-For', '203.0.113.10').expect(429);
      } finally {
        await keyed.close();
      }
    });
  });
});
