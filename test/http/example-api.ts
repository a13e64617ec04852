import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

/** What the three example apps' `createApp()` take. */
export interface ExampleOptions {
  readonly floodgate: Floodgate;
  readonly recommendations: { forUser(userId: string): Promise<readonly string[]> };
}

/** Starts one framework's example app: its server (not listening) and how to stop it. */
export type StartExample = (options: ExampleOptions) => Promise<{ readonly server: Server; close(): Promise<void> }>;

/** An upstream whose slowness advances the engine's ManualClock. */
export function upstreamOn(clock: ManualClock): ExampleOptions['recommendations'] & { latencyMs: number } {
  return {
    latencyMs: 20,
    async forUser(userId: string) {
      await clock.advance(this.latencyMs);
      return [`${userId}: new releases`];
    },
  };
}

/** The same behaviour, checked on each framework's example (examples/<framework>/app.ts). */
export function runExampleApi(name: string, start: StartExample): void {
  describe(`examples/${name}`, () => {
    let clock: ManualClock;
    let fg: Floodgate;
    let upstream: ReturnType<typeof upstreamOn>;
    let server: Server;
    let close: () => Promise<void>;

    beforeEach(async () => {
      clock = new ManualClock(10_000);
      fg = new Floodgate({ clock });
      upstream = upstreamOn(clock);
      ({ server, close } = await start({ floodgate: fg, recommendations: upstream }));
    });

    afterEach(() => close());

    const get = (path: string, user: string): request.Test => request(server).get(path).set('x-user-id', user);

    it('answers 429 past the global limit of 100 requests per second', async () => {
      for (let i = 0; i < 100; i++) await get(`/users/${i}`, `user-${i}`).expect(200);
      const blocked = await get('/users/1', 'late').expect(429);
      expect(blocked.headers['ratelimit-policy']).toBe('"flow";q=100;w=1');
      expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: '* /*' });
    });

    it('limits each caller of GET /users/:id to 5 requests per second, and the VIP to 20', async () => {
      for (let i = 0; i < 5; i++) await get('/users/7', 'alice').expect(200, { id: '7', name: 'User 7' });
      const blocked = await get('/users/7', 'alice').expect(429);
      expect(blocked.headers['ratelimit-policy']).toBe('"hotspot";q=5;w=1');
      expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', resource: 'GET /users/:id' });
      await get('/users/7', 'bob').expect(200);
      for (let i = 0; i < 20; i++) await get('/users/7', 'vip').expect(200);
      expect((await get('/users/7', 'vip').expect(429)).headers['ratelimit-policy']).toBe('"hotspot";q=20;w=1');
    });

    it('opens the breaker on slow recommendations, serving stale ones or 503, and closes after a fast probe', async () => {
      await get('/recommendations', 'alice').expect(200, { items: ['alice: new releases'], stale: false });
      upstream.latencyMs = 300;
      for (const user of ['b', 'c', 'd', 'e']) await get('/recommendations', user).expect(200);
      expect(fg.circuitState('GET /recommendations')[0]!.state).toBe('open');
      await get('/recommendations', 'alice').expect(200, { items: ['alice: new releases'], stale: true });
      const unavailable = await get('/recommendations', 'zed').expect(503);
      expect(unavailable.headers['retry-after']).toBe('5');
      expect(unavailable.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(unavailable.text)).toMatchObject({
        code: 'ERR_CIRCUIT_OPEN',
        resource: 'GET /recommendations',
      });
      await clock.advance(5000);
      upstream.latencyMs = 20;
      await get('/recommendations', 'zed').expect(200, { items: ['zed: new releases'], stale: false });
      expect(fg.circuitState('GET /recommendations')[0]!.state).toBe('closed');
    });
  });
}

/**
 * Runs `examples/<name>/app.ts` as a user would (tsx, from source) on `PORT=0`; resolves to the
 * URL it printed and a function that stops it.
 */
async function startExampleProcess(
  name: string,
): Promise<{ url: string; output: () => string; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, '../../examples', name, 'app.ts')],
    {
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const look = (): void => {
      const match = new RegExp(`^examples/${name} is listening on (http://127\\.0\\.0\\.1:\\d+)$`, 'm').exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', look);
    void exited.then(() => reject(new Error(`examples/${name}/app.ts exited before listening:\n${output}`)));
  });
  return {
    url,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Checks that `examples/<name>/app.ts`, run on its own, serves and says where. */
export function runExampleProcess(name: string): void {
  it(`serves examples/${name} when run on its own, and prints its URL`, async () => {
    const example = await startExampleProcess(name);
    try {
      const response = await fetch(`${example.url}/users/7`, { headers: { 'x-user-id': 'alice' } });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ id: '7', name: 'User 7' });
      expect(example.output()).toContain(`try: curl -i -H 'x-user-id: alice' ${example.url}/users/1`);
    } finally {
      await example.stop();
    }
  }, 30_000);
}

/** Closes a server started by supertest or not at all. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
