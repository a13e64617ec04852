import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource, type RuleSetOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { UNMATCHED_RESOURCE } from '@floodgate/core/http';
import type { Harness, RouteSpec, Started } from './app-spec';
import { sendRaw } from './raw-client';

/**
 * Every route a resource, against each framework: `resilience({ everyRoute: true })` (the
 * Fastify plugin's option) with no rule in code; rules written to a real file that
 * `fileRuleSource` watches, waited for by their `rulesLoaded` event (never a sleep), limit the
 * routes by the framework's templates, per client address (connections from other loopback
 * addresses) and per header value; requests no route matches share one resource; API groups
 * share one budget. Time is a ManualClock.
 */

const A = '127.0.0.2';
const B = '127.0.0.3';

const ok: RouteSpec['handler'] = () => ({ body: { ok: true } });
const ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users/:id', handler: ok },
  { method: 'POST', path: '/cart/:item', handler: ok },
  { method: 'POST', path: '/orders', handler: ok },
  { method: 'GET', path: '/health', handler: ok },
];

/**
 * Resolves when the engine applies a version of the rule file (its `rulesLoaded` event from the
 * source `'file'`), however long the file system takes to tell of the write: no real-time bound,
 * so a slow machine does not fail it; jest's timeout ends a test whose file is never loaded.
 */
export function nextFileLoad(fg: Floodgate): Promise<void> {
  return new Promise((resolve) => {
    const off = fg.on('rulesLoaded', ({ source }) => {
      if (source !== 'file') return;
      off();
      resolve();
    });
  });
}

export function runEveryRoute(harness: Harness): void {
  describe(`${harness.name}: every route a resource, rules from a watched file`, () => {
    let clock: ManualClock;
    let fg: Floodgate;
    let started: Started;
    let server: Server;
    let dir: string;
    let file: string;
    let source: FileRuleSource;

    async function start(options: Record<string, unknown> = {}): Promise<void> {
      started = await harness.start({ floodgate: fg, options: { everyRoute: true, ...options }, routes: ROUTES });
      server = started.server;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    }

    /** Writes the rule file as an operator would (no API call) and waits until it is in force. */
    async function writeRules(rules: RuleSetOptions): Promise<void> {
      const loaded = nextFileLoad(fg);
      writeFileSync(file, JSON.stringify(rules));
      await loaded;
    }

    const get = (path: string, headers: Record<string, string> = {}, from = A) =>
      sendRaw(server, 'GET', path, headers, from);

    beforeEach(() => {
      clock = new ManualClock(10_000);
      fg = new Floodgate({ clock });
      dir = mkdtempSync(join(tmpdir(), 'floodgate-every-route-'));
      file = join(dir, 'rules.json');
      source = fileRuleSource(fg, file, { debounceMs: 10 });
    });

    afterEach(async () => {
      source.close();
      await started?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('limits a route per client address once a rule for it is written to the file', async () => {
      await start();
      expect(await get('/users/1')).toBe(200);
      await writeRules({ hotParams: [{ resource: 'GET /users/:id', key: { from: 'ip' }, threshold: 2 }] });
      expect([await get('/users/1'), await get('/users/2'), await get('/users/3')]).toEqual([200, 200, 429]);
      // Another client has its own budget; a spoofed X-Forwarded-For without trust proxy changes nothing.
      expect(await get('/users/1', {}, B)).toBe(200);
      expect(await get('/users/1', { 'X-Forwarded-For': '198.51.100.7' })).toBe(429);
      // Other routes are not limited by it.
      expect(await get('/health')).toBe(200);
      await clock.advance(1001);
      expect(await get('/users/1')).toBe(200);
    });

    it('limits a route per header value, whatever the letter case of its name', async () => {
      await start();
      await writeRules({
        hotParams: [{ resource: 'GET /users/:id', key: { from: 'header', name: 'X-Api-Key' }, threshold: 1 }],
      });
      expect(await get('/users/1', { 'x-api-key': 'k1' })).toBe(200);
      expect(await get('/users/2', { 'X-API-KEY': 'k1' })).toBe(429);
      expect(await get('/users/1', { 'x-api-key': 'k2' }, B)).toBe(200);
      // A repeated header counts each of its values: hiding behind another value does not help.
      expect(await get('/users/1', { 'x-api-key': 'k3', 'X-Api-Key': 'k1' })).toBe(429);
      // Requests without the header share one budget rather than escaping it.
      expect([await get('/users/1'), await get('/users/1', {}, B)]).toEqual([200, 429]);
    });

    it('counts only the values a match accepts', async () => {
      await start();
      await writeRules({
        hotParams: [
          {
            resource: 'GET /users/:id',
            key: {
              from: 'header',
              name: 'authorization',
              match: { strategy: 'regex', pattern: 'Bearer sk_[a-z0-9]+' },
            },
            threshold: 1,
          },
        ],
      });
      const secret = { Authorization: 'Bearer sk_abc123' };
      expect([await get('/users/1', secret), await get('/users/1', secret)]).toEqual([200, 429]);
      expect([await get('/users/1', { Authorization: 'Basic x' }), await get('/users/1')]).toEqual([200, 200]);
    });

    it('folds requests no route matches into one resource, never a resource per path', async () => {
      await start();
      await writeRules({ flow: [{ resource: UNMATCHED_RESOURCE, threshold: 2 }] });
      const statuses = [await get('/nope/1'), await get('/nope/2?x=1'), await get('/%6Eope/3')];
      expect(statuses.slice(0, 2)).toEqual([404, 404]);
      expect(statuses[2]).toBe(429);
      expect(await get('/users/1')).toBe(200);
      expect(fg.resourceNames().sort()).toEqual([UNMATCHED_RESOURCE, 'GET /users/:id'].sort());
    });

    it('names no resource after a request path, whatever the client sends', async () => {
      await start();
      const methods = ['GET', 'HEAD', 'POST', 'DELETE', 'PURGE', 'OPTIONS'];
      const paths = (i: number) => [
        `/users/${i}`,
        `//users//${i}/`,
        `/USERS/%${(0x30 + (i % 10)).toString(16)}`,
        `/junk/${i}/${'x'.repeat(i % 50)}`,
        `/users/${i}?id=${i}#f`,
        `http://h${i}/orders`,
        `/cart/${encodeURIComponent(`é${i}`)}`,
      ];
      for (let i = 0; i < 30; i++)
        for (const path of paths(i)) await sendRaw(server, methods[i % methods.length]!, path, {}, A);
      const templates = new Set([
        UNMATCHED_RESOURCE,
        ...ROUTES.flatMap((route) => [`${route.method} ${route.path}`, `HEAD ${route.path}`]),
        ...['DELETE', 'PURGE', 'OPTIONS', 'GET'].flatMap((method) => ROUTES.map((route) => `${method} ${route.path}`)),
      ]);
      const names = fg.resourceNames();
      expect(names.filter((name) => !templates.has(name))).toEqual([]);
      expect(names.length).toBeLessThanOrEqual(ROUTES.length + 1);
    });

    it('shares one budget across an API group loaded from the file, besides each route’s own', async () => {
      await start();
      await writeRules({
        apiGroups: [{ name: 'checkout', patterns: ['POST /cart/*', 'POST /orders'] }],
        flow: [
          { resource: 'checkout', threshold: 3 },
          { resource: 'POST /orders', threshold: 1 },
        ],
      });
      const post = (path: string) => sendRaw(server, 'POST', path, {}, A);
      // The route's own limit and the group's both hold.
      expect([await post('/orders'), await post('/orders')]).toEqual([200, 429]);
      expect([await post('/cart/a'), await post('/cart/b'), await post('/cart/c')]).toEqual([200, 200, 429]);
      expect(await get('/users/1')).toBe(200);
      expect(fg.stats('checkout')?.lastSecond.pass).toBe(3);
    });

    it('shares one budget across an API group declared in code', async () => {
      await start({
        groups: [
          {
            name: 'writes',
            patterns: ['POST /cart/:item', { method: 'POST', regex: '/ord[a-z]+' }],
            rateLimit: { threshold: 2 },
          },
        ],
      });
      const post = (path: string) => sendRaw(server, 'POST', path, {}, A);
      expect([await post('/cart/a'), await post('/orders'), await post('/orders')]).toEqual([200, 200, 429]);
    });
  });
}
