import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import request from 'supertest';
import { blockErrorHandler, hotParam, ipKey, rateLimit, resilience } from '@floodgate/koa';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

describe('@floodgate/koa', () => {
  let fg: Floodgate;

  beforeEach(() => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
  });

  it('names a per-route resource by the router’s prefixed path', async () => {
    const app = new Koa();
    const router = new Router({ prefix: '/api' });
    router.get('/users/:id', rateLimit({ floodgate: fg, threshold: 1 }), (ctx: Context) => {
      ctx.body = { ok: true };
    });
    app.use(router.routes());
    await request(app.callback()).get('/api/users/1').expect(200);
    const blocked = await request(app.callback()).get('/api/users/2').expect(429);
    expect(JSON.parse(blocked.text).resource).toBe('GET /api/users/:id');
  });

  it('fails a per-route middleware used outside a router through Koa’s error handling, saying why', async () => {
    const app = new Koa();
    const errors: unknown[] = [];
    app.on('error', (err: unknown) => errors.push(err));
    app.use(rateLimit({ floodgate: fg, threshold: 1 }));
    await request(app.callback()).get('/a').expect(500);
    expect(String(errors[0])).toContain('rateLimit() cannot tell which route this request is on');
  });

  it('answers a BlockError from downstream with blockErrorHandler alone', async () => {
    fg.loadFlowRules([{ resource: 'deep', threshold: 0 }]);
    const app = new Koa();
    app.use(blockErrorHandler({ floodgate: fg }));
    app.use(() => {
      fg.entry('deep');
    });
    const blocked = await request(app.callback()).get('/x').expect(429);
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'deep' });
  });

  it('rethrows errors that are not blocks to Koa', async () => {
    const app = new Koa();
    const errors: unknown[] = [];
    app.on('error', (err: unknown) => errors.push(err));
    app.use(resilience({ floodgate: fg }));
    app.use(() => {
      throw new Error('boom');
    });
    await request(app.callback()).get('/x').expect(500);
    expect(errors).toEqual([new Error('boom')]);
  });

  it('refuses invalid per-route options when the middleware is created', () => {
    expect(() => rateLimit({ floodgate: fg, threshold: 1, behaviour: 'throttle' } as never)).toThrow(
      'Invalid rateLimit() options: behaviour: unknown field',
    );
  });

  describe('ipKey', () => {
    function appKeyedByIp(proxy: boolean): Koa {
      const app = new Koa({ proxy });
      const router = new Router();
      router.get('/a', hotParam({ floodgate: fg, param: ipKey, threshold: 1 }), (ctx: Context) => {
        ctx.body = { ok: true };
      });
      app.use(router.routes());
      return app;
    }

    it('keys a client by the address app.proxy gives, IPv4-mapped read as IPv4', async () => {
      const app = appKeyedByIp(true).callback();
      await request(app).get('/a').set('X-Forwarded-For', '::ffff:203.0.113.9').expect(200);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.9').expect(429);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.10').expect(200);
    });

    it('keys IPv6 clients by their /56', async () => {
      const app = appKeyedByIp(true).callback();
      await request(app).get('/a').set('X-Forwarded-For', '2001:db8:0:1aa::1').expect(200);
      await request(app).get('/a').set('X-Forwarded-For', '2001:db8:0:1bb::2').expect(429);
    });

    it('ignores X-Forwarded-For without app.proxy', async () => {
      const app = appKeyedByIp(false).callback();
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.9').expect(200);
      await request(app).get('/a').set('X-Forwarded-For', '203.0.113.10').expect(429);
    });
  });
});
