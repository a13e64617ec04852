/**
 * Sentinel's gateway rules from Sentinel-format files over real HTTP: an Express app with every
 * route under guard and no rule in code; a `GatewayFlowRule` with a CLIENT_IP `paramItem` (and an
 * `ApiDefinition` with a rule on its API name), written to the files a `fileRuleSource` with
 * `format: 'sentinel'` watches, limits a route per client address. Requests come from distinct
 * loopback addresses; time is a ManualClock.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import type { RouteSpec, Started } from '../http/app-spec';
import { nextFileLoad } from '../http/every-route';
import { sendRaw } from '../http/raw-client';
import { expressHarness } from './express-harness';

const A = '127.0.0.2';
const B = '127.0.0.3';
const ok: RouteSpec['handler'] = () => ({ body: { ok: true } });
const ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users/:id', handler: ok },
  { method: 'GET', path: '/product/:sku', handler: ok },
  { method: 'GET', path: '/product/:sku/reviews', handler: ok },
  { method: 'GET', path: '/health', handler: ok },
];

describe("Express, every route under guard: Sentinel's gateway rules from a watched file", () => {
  let clock: ManualClock;
  let fg: Floodgate;
  let started: Started | undefined;
  let server: Server;
  let dir: string;
  let files: { 'gw-flow': string; 'gw-api-group': string };
  let source: FileRuleSource;

  beforeEach(async () => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
    dir = mkdtempSync(join(tmpdir(), 'floodgate-sentinel-gateway-'));
    files = { 'gw-flow': join(dir, 'gw-flow.json'), 'gw-api-group': join(dir, 'gw-api-group.json') };
    source = fileRuleSource(fg, files, { format: 'sentinel', debounceMs: 10 });
    started = await expressHarness.start({ floodgate: fg, options: { everyRoute: true }, routes: ROUTES });
    server = started.server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    source.close();
    await started?.close();
    started = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes Sentinel's JSON to the files, as a Java service's data source would, and waits until it is in force. */
  async function writeSentinel(documents: { 'gw-flow'?: unknown[]; 'gw-api-group'?: unknown[] }): Promise<void> {
    const loaded = nextFileLoad(fg);
    if (documents['gw-api-group'] !== undefined)
      writeFileSync(files['gw-api-group'], JSON.stringify(documents['gw-api-group']));
    if (documents['gw-flow'] !== undefined) writeFileSync(files['gw-flow'], JSON.stringify(documents['gw-flow']));
    await loaded;
  }

  const get = (path: string, from = A) => sendRaw(server, 'GET', path, {}, from);

  it('limits a route per client IP with a CLIENT_IP gateway rule', async () => {
    expect(await get('/users/1')).toBe(200);
    await writeSentinel({
      'gw-flow': [
        {
          resource: 'GET /users/:id',
          resourceMode: 0,
          grade: 1,
          count: 2,
          intervalSec: 1,
          controlBehavior: 0,
          burst: 0,
          maxQueueingTimeoutMs: 500,
          paramItem: { parseStrategy: 0, matchStrategy: 0 },
        },
      ],
    });
    expect(fg.getRules().hotParams).toMatchObject([{ resource: 'GET /users/:id', key: { from: 'ip' } }]);
    expect([await get('/users/1'), await get('/users/2'), await get('/users/3')]).toEqual([200, 200, 429]);
    expect(await get('/users/1', B)).toBe(200); // another client has its own budget
    expect(await get('/health')).toBe(200); // other routes are not limited by it
    await clock.advance(1001);
    expect(await get('/users/1')).toBe(200);
  });

  it('limits an API definition per client IP across its routes, from the two files', async () => {
    await writeSentinel({
      'gw-api-group': [{ apiName: 'catalog', predicateItems: [{ pattern: '/product/**', matchStrategy: 1 }] }],
      'gw-flow': [
        {
          resource: 'catalog',
          resourceMode: 1,
          count: 1,
          paramItem: { parseStrategy: 0 },
        },
      ],
    });
    expect(await get('/product/1')).toBe(200);
    expect(await get('/product/2/reviews')).toBe(429); // one budget for the group, per client
    expect(await get('/product/2/reviews', B)).toBe(200);
    expect(await get('/users/1')).toBe(200);
  });
});
