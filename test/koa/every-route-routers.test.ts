import Router from '@koa/router';
import Koa from 'koa';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { resilience } from '@floodgate/koa';

/** Every route guarding on Koa: the app's @koa/router routers, in order, by their own matching. */

describe('Koa: every route guarding names the route @koa/router dispatches to', () => {
  it('names routes of several routers by their templates, prefixes included, and reads ctx.state.user', async () => {
    const fg = new Floodgate({ clock: new ManualClock(1000) });
    fg.loadRules({
      hotParams: [{ resource: 'GET /v1/items/:id', key: { from: 'user', name: 'id' }, threshold: 1 }],
    });
    const app = new Koa();
    app.use((ctx, next) => {
      ctx.state.user = { id: ctx.get('x-user') };
      return next();
    });
    app.use(resilience({ floodgate: fg, everyRoute: true }));
    const v1 = new Router({ prefix: '/v1' });
    v1.get('/items/:id', (ctx) => {
      ctx.body = { ok: true };
    });
    const admin = new Router({ host: 'admin.test' });
    admin.get('/stats', (ctx) => {
      ctx.body = { ok: true };
    });
    app.use(v1.routes()).use(admin.routes());
    const server = app.callback();
    const statuses = [];
    for (const [path, user] of [
      ['/v1/items/1', 'u1'],
      ['/V1/ITEMS/2', 'u1'],
      ['/v1/items/3', 'u2'],
    ] as const)
      statuses.push((await request(server).get(path).set('x-user', user)).status);
    expect(statuses).toEqual([200, 429, 200]);
    await request(server).get('/stats').set('Host', 'admin.test');
    await request(server).get('/stats').set('Host', 'other.test');
    await request(server).head('/v1/items/1').set('x-user', 'u9');
    expect(fg.resourceNames().sort()).toEqual(['(unmatched)', 'GET /stats', 'GET /v1/items/:id']);
  });
});
