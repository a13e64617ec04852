import Fastify, { type FastifyInstance } from 'fastify';
import request from 'supertest';
import fastifyFloodgateDefault, { fastifyFloodgate } from '@floodgate/fastify';
import { Floodgate, ManualClock } from '@floodgate/core';

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
    expect((fastifyFloodgate as unknown as Record<symbol, unknown>)[Symbol.for('plugin-meta')]).toMatchObject({ name: '@floodgate/fastify', fastify: '5.x' });
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
    app.route({ method: ['GET', 'POST'], url: '/both', config: { floodgate: { rateLimit: { threshold: 1 } } }, handler: async () => ({ ok: true }) });
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
    expect(() => app.get('/bad', { config: { floodgate: { rateLimit: { threshold: -1 } } } }, async () => ({ ok: true }))).toThrow(
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
    app.get('/inner', { errorHandler: (_e, _r, reply) => void reply.code(418).send({}) }, async () => fg.entry('inner'));
    await app.ready();
    const blocked = await request(app.server).get('/inner').expect(429);
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'inner' });
  });
});
