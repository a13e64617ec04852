import request from 'supertest';
import { Floodgate, ManualClock } from '@floodgate/core';
import { createApp, type RecommendationSource } from '../../examples/express/app';

/** An upstream whose slowness advances the engine's ManualClock. */
function upstreamOn(clock: ManualClock): RecommendationSource & { latencyMs: number } {
  return {
    latencyMs: 20,
    async forUser(userId: string) {
      await clock.advance(this.latencyMs);
      return [`${userId}: new releases`];
    },
  };
}

describe('examples/express', () => {
  let clock: ManualClock;
  let fg: Floodgate;

  beforeEach(() => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
  });

  it('answers 429 past the global limit of 100 requests per second', async () => {
    const app = createApp({ floodgate: fg });
    for (let i = 0; i < 100; i++) await request(app).get(`/users/${i}`).set('x-user-id', `user-${i}`).expect(200);
    const blocked = await request(app).get('/users/1').set('x-user-id', 'late').expect(429);
    expect(blocked.headers['ratelimit-policy']).toBe('"flow";q=100;w=1');
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: '* /*' });
  });

  it('limits each caller of GET /users/:id to 5 requests per second, and the VIP to 20', async () => {
    const app = createApp({ floodgate: fg });
    for (let i = 0; i < 5; i++) await request(app).get('/users/7').set('x-user-id', 'alice').expect(200, { id: '7', name: 'User 7' });
    const blocked = await request(app).get('/users/7').set('x-user-id', 'alice').expect(429);
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', resource: 'GET /users/:id' });
    await request(app).get('/users/7').set('x-user-id', 'bob').expect(200);
    for (let i = 0; i < 20; i++) await request(app).get('/users/7').set('x-user-id', 'vip').expect(200);
    expect(JSON.parse((await request(app).get('/users/7').set('x-user-id', 'vip').expect(429)).text).resource).toBe('GET /users/:id');
  });

  it('opens the breaker on slow recommendations, serving stale ones or 503, and closes after a fast probe', async () => {
    const upstream = upstreamOn(clock);
    const app = createApp({ floodgate: fg, recommendations: upstream });
    await request(app).get('/recommendations').set('x-user-id', 'alice').expect(200, { items: ['alice: new releases'], stale: false });
    upstream.latencyMs = 300;
    for (const user of ['b', 'c', 'd', 'e']) await request(app).get('/recommendations').set('x-user-id', user).expect(200);
    expect(fg.circuitState('GET /recommendations')[0]!.state).toBe('open');
    await request(app).get('/recommendations').set('x-user-id', 'alice').expect(200, { items: ['alice: new releases'], stale: true });
    const unavailable = await request(app).get('/recommendations').set('x-user-id', 'zed').expect(503);
    expect(unavailable.headers['retry-after']).toBe('5');
    expect(JSON.parse(unavailable.text)).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', resource: 'GET /recommendations' });
    await clock.advance(5000);
    upstream.latencyMs = 20;
    await request(app).get('/recommendations').set('x-user-id', 'zed').expect(200, { items: ['zed: new releases'], stale: false });
    expect(fg.circuitState('GET /recommendations')[0]!.state).toBe('closed');
  });

  it('builds its own engine when none is given', async () => {
    await request(createApp()).get('/users/1').set('x-user-id', 'a').expect(200);
  });
});
