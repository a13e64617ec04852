import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { createApp } from '../../examples/nestjs/app';
import { upstreamOn } from '../http/example-api';

describe.each(['express', 'fastify'] as const)('examples/nestjs on %s', (platform) => {
  let clock: ManualClock;
  let fg: Floodgate;
  let upstream: ReturnType<typeof upstreamOn>;
  let app: INestApplication;
  let server: Server;

  beforeEach(async () => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
    upstream = upstreamOn(clock);
    app = await createApp({ platform, floodgate: fg, recommendations: upstream });
    server = app.getHttpServer() as Server;
  });

  afterEach(() => app.close());

  const get = (path: string, user: string): request.Test => request(server).get(path).set('x-user-id', user);

  it('answers 429 past 100 requests per second to one handler', async () => {
    for (let i = 0; i < 100; i++) await get(`/users/${i}`, `user-${i}`).expect(200);
    const blocked = await get('/users/1', 'late').expect(429);
    expect(blocked.headers['ratelimit-policy']).toBe('"flow";q=100;w=1');
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'UsersController.find' });
  });

  it('limits each caller of GET /users/:id to 5 requests per second, and the VIP to 20', async () => {
    for (let i = 0; i < 5; i++) await get('/users/7', 'alice').expect(200, { id: '7', name: 'User 7' });
    const blocked = await get('/users/7', 'alice').expect(429);
    expect(blocked.headers['ratelimit-policy']).toBe('"hotspot";q=5;w=1');
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', resource: 'UsersController.find' });
    await get('/users/7', 'bob').expect(200);
    for (let i = 0; i < 20; i++) await get('/users/7', 'vip').expect(200);
    await get('/users/7', 'vip').expect(429);
  });

  it('opens the breaker on slow recommendations, serving stale ones or 503, and closes after a fast probe', async () => {
    await get('/recommendations', 'alice').expect(200, { items: ['alice: new releases'], stale: false });
    upstream.latencyMs = 300;
    for (const user of ['b', 'c', 'd', 'e']) await get('/recommendations', user).expect(200);
    expect(fg.circuitState('RecommendationsService.forUser')[0]!.state).toBe('open');
    await get('/recommendations', 'alice').expect(200, { items: ['alice: new releases'], stale: true });
    const unavailable = await get('/recommendations', 'zed').expect(503);
    expect(unavailable.headers['retry-after']).toBe('5');
    expect(unavailable.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(unavailable.text)).toMatchObject({
      code: 'ERR_CIRCUIT_OPEN',
      resource: 'RecommendationsService.forUser',
    });
    await clock.advance(5000);
    upstream.latencyMs = 20;
    await get('/recommendations', 'zed').expect(200, { items: ['zed: new releases'], stale: false });
    expect(fg.circuitState('RecommendationsService.forUser')[0]!.state).toBe('closed');
  });

  it('leaves GET /health unguarded', async () => {
    await request(server).get('/health').expect(200, { ok: true });
    expect(fg.stats('HealthController.health')).toBeUndefined();
  });
});

describe('examples/nestjs defaults', () => {
  it('builds its own engine and upstream, on Express, when given none', async () => {
    const app = await createApp();
    await request(app.getHttpServer()).get('/users/1').set('x-user-id', 'a').expect(200);
    await app.close();
  });
});
