import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import Redis from 'ioredis';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { dashboard } from '@floodgate/dashboard';
import { publishRules, redisRuleSource } from '@floodgate/redis';
import { until } from '../support/until';
import { closeServer, MOUNTS } from './support/mounts';
import { useDashboards } from './support/fixture';
import { testRedisUrl } from '../support/test-services';
import { firstEvent } from './support/events';

const TOKEN = 'a-token-for-tests';
const auth = { authorization: `Bearer ${TOKEN}` };
/** The app's flow rules, without the dashboard's own (DASHBOARD_RESOURCES). */
const appFlow = (engine: Floodgate) =>
  engine.getRules().flow.filter((rule) => !rule.resource.startsWith('floodgate-dashboard:'));
/** The app's rules, without the dashboard's own. */
const appRules = (engine: Floodgate) =>
  engine.describeRules().filter((d) => !d.resource.startsWith('floodgate-dashboard:'));

const fixture = useDashboards(TOKEN);
const { make, mount, afterwards } = fixture;
let fg: Floodgate;
let clock: ManualClock;
beforeEach(() => ({ fg, clock } = fixture));

describe.each(Object.keys(MOUNTS))('dashboard mounted on %s', (name) => {
  it('redirects the mount point to its trailing-slash form, keeping the query', async () => {
    const { server, prefix } = await mount(name);
    if (prefix === '') return void (await request(server).get('/').expect(200));
    await request(server).get(`${prefix}?x=1`).expect(308).expect('location', `${prefix}/?x=1`);
  });

  it('serves the page and its script with a strict content security policy', async () => {
    const { server, prefix } = await mount(name);
    const page = await request(server).get(`${prefix}/`).expect(200).expect('content-type', 'text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.text).toContain('<script src="dashboard.js" defer></script>');
    await request(server)
      .get(`${prefix}/dashboard.js`)
      .expect(200)
      .expect('content-type', 'text/javascript; charset=utf-8');
    await request(server).get(`${prefix}/dashboard.css`).expect(200).expect('content-type', 'text/css; charset=utf-8');
  });

  it('applies a rule edit carrying the token, and refuses one without it', async () => {
    const { server, prefix } = await mount(name);
    const rules = { flow: [{ resource: 'api', threshold: 3 }] };
    await request(server).put(`${prefix}/api/rules`).send(rules).expect(401).expect('www-authenticate', 'Bearer');
    expect(appFlow(fg)).toEqual([]);
    const answer = await request(server).put(`${prefix}/api/rules`).set(auth).send(rules).expect(200);
    expect(answer.body).toEqual({
      message: 'Rules applied through engine',
      via: 'engine',
      version: expect.any(String),
    });
    expect(appRules(fg)).toEqual([expect.objectContaining({ resource: 'api', layer: 'loaded', source: 'dashboard' })]);
  });

  it('answers the page of resources and of rules the query asks for', async () => {
    const { server, prefix } = await mount(name, { pageSize: 1 });
    fg.loadFlowRules(['a', 'b'].map((resource) => ({ resource, threshold: 1 })));
    for (const resource of ['a', 'b']) fg.entry(resource).exit();
    const state = await request(server).get(`${prefix}/api/state?resources=1&rules=1`).expect(200);
    expect(state.body).toMatchObject({ resources: [{ name: 'b' }], rules: [{ resource: 'b' }] });
    const rules = await request(server).get(`${prefix}/api/rules?page=1`).expect(200);
    expect(rules.body).toMatchObject({ rules: [{ resource: 'b' }], rulePage: { page: 1 } });
  });

  it('streams a snapshot of the engine to a page', async () => {
    const { server, prefix } = await mount(name);
    fg.loadFlowRules([{ resource: 'api', threshold: 3 }]);
    fg.entry('api').exit();
    await clock.advance(1000);
    const { data, response, close } = await firstEvent(server, `${prefix}/events`, 'snapshot');
    close();
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(data.resources).toContainEqual({
      name: 'api',
      concurrency: 0,
      points: [{ t: 50_000, pass: 1, block: 0, wouldBlock: 0, error: 0, rtMs: 0 }],
    });
    expect(data.rules).toContainEqual(expect.objectContaining({ resource: 'api', source: 'api' }));
  });
});

describe('dashboard blocks by priority', () => {
  it('gives a resource its blocks by priority once a call claimed one, and none before', async () => {
    const { server } = await mount('express');
    fg.loadFlowRules([{ resource: 'api', threshold: 2 }]);
    fg.entry('api').exit();
    const before = await request(server).get('/fg/api/state').expect(200);
    expect(before.body.resources).toContainEqual({ name: 'api', concurrency: 0, points: expect.any(Array) });
    fg.entry('api', { priority: 'critical' }).exit();
    fg.tryEntry('api', { priority: 'sheddable' });
    fg.tryEntry('api', { priority: 'sheddable' });
    fg.tryEntry('api');
    await clock.advance(1000); // the next period: the page's view is read once a period
    const after = await request(server).get('/fg/api/state').expect(200);
    expect(after.body.resources).toContainEqual(
      expect.objectContaining({ name: 'api', blocksByPriority: { critical: 0, default: 1, sheddable: 2 } }),
    );
  });
});

describe('dashboard rule edits', () => {
  it('is read-only without a token: every edit is refused with 403', async () => {
    const { server } = await mount('express', {});
    await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [] })
      .expect(403, { message: 'The dashboard is read-only: no token is configured' });
    const state = await request(server).get('/fg/api/state').expect(200);
    expect(state.body).toMatchObject({ readOnly: true, editTarget: 'engine' });
  });

  it('refuses a token that differs only in its last character, or in letter case', async () => {
    const { server } = await mount('express');
    await request(server)
      .put('/fg/api/rules')
      .set({ authorization: `Bearer ${TOKEN.slice(0, -1)}X` })
      .send({ flow: [] })
      .expect(401);
    await request(server)
      .put('/fg/api/rules')
      .set({ authorization: `Bearer ${TOKEN.toUpperCase()}` })
      .send({ flow: [] })
      .expect(401);
    await request(server).put('/fg/api/rules').set({ authorization: TOKEN }).send({ flow: [] }).expect(401);
  });

  it('refuses a body that is not declared as JSON', async () => {
    const { server } = await mount('express');
    await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .set('content-type', 'text/plain')
      .send('{"flow":[]}')
      .expect(415);
  });

  it('refuses a body over the limit, declared or streamed without a length', async () => {
    const { server } = await mount('express', { token: TOKEN, maxBodyBytes: 1024 });
    const big = JSON.stringify({ flow: [{ resource: 'x'.repeat(2000), threshold: 1 }] });
    await request(server).put('/fg/api/rules').set(auth).set('content-type', 'application/json').send(big).expect(413);
    const { port } = server.address() as AddressInfo;
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/fg/api/rules',
          method: 'PUT',
          headers: { ...auth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 4; i++) req.write(big.slice(i * 500, (i + 1) * 500));
      req.end();
    });
    expect(status).toBe(413);
    expect(appFlow(fg)).toEqual([]);
  });

  it('answers every problem by path with 422 and applies nothing', async () => {
    const { server } = await mount('express');
    fg.loadFlowRules([{ resource: 'api', threshold: 3 }]);
    const answer = await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({
        flow: [{ resource: 'api', threshold: -1 }],
        circuitBreakers: [{ resource: 'api', strategy: 'errorRatio', threshold: 2, retryTimeoutMs: 1 }],
      })
      .expect(422);
    expect(answer.body.issues).toEqual([
      { path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' },
      { path: 'circuitBreakers[0].threshold', message: expect.stringContaining('got 2') },
    ]);
    expect(appFlow(fg)).toEqual([expect.objectContaining({ threshold: 3 })]);
  });

  it('answers a body that is not JSON with 400 and the parse error', async () => {
    const { server } = await mount('express');
    const answer = await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .set('content-type', 'application/json')
      .send('{"flow": [')
      .expect(400);
    expect(answer.body.issues).toEqual([{ path: '', message: expect.stringContaining('is not valid JSON') }]);
  });

  it('takes the body as the whole loaded layer: kinds left out are emptied', async () => {
    const { server } = await mount('express');
    fg.loadAuthorityRules([{ resource: 'api', origins: ['bad'], strategy: 'deny' }]);
    await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: 3 }] })
      .expect(200);
    expect(fg.getRules().authority).toEqual([]);
    expect(appFlow(fg)).toHaveLength(1);
  });

  it('uses a body that express.json() already parsed', async () => {
    const app = express();
    app.use(express.json());
    app.use('/fg', make().express());
    await request(app)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: 4 }] })
      .expect(200);
    expect(appFlow(fg)).toEqual([expect.objectContaining({ threshold: 4 })]);
  });

  it('applies maxBodyBytes to a body that express.json() parsed first, as JSON text', async () => {
    const app = express();
    app.use(express.json({ limit: '10mb' }));
    app.use('/fg', make({ token: TOKEN, maxBodyBytes: 1024 }).express());
    fg.loadFlowRules([{ resource: 'api', threshold: 3 }]);
    const big = { flow: [{ resource: 'x'.repeat(2000), threshold: 1 }] };
    const answer = await request(app).put('/fg/api/rules').set(auth).send(big).expect(413);
    expect(answer.body.message).toBe('The body is larger than 1024 bytes (as parsed, written as JSON)');
    expect(appFlow(fg)).toEqual([expect.objectContaining({ resource: 'api', threshold: 3 })]);
    await request(app)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: 4 }] })
      .expect(200);
  });

  it('writes edits through a file store: the file holds them and they are loaded from the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floodgate-dashboard-'));
    afterwards({ close: () => rmSync(dir, { recursive: true, force: true }) });
    const file = join(dir, 'rules.json');
    const store: FileRuleSource = fileRuleSource(fg, file);
    afterwards(store);
    const { server } = await mount('express', { token: TOKEN, store });
    const answer = await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: 5 }] })
      .expect(200);
    expect(answer.body.via).toBe('file');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      authority: [],
      system: [],
      pushback: [],
      hotParams: [],
      flow: [{ resource: 'api', threshold: 5 }],
      adaptiveThrottling: [],
      retryBudgets: [],
      circuitBreakers: [],
      apiGroups: [],
    });
    expect(appRules(fg)).toEqual([expect.objectContaining({ resource: 'api', source: 'file' })]);
  });

  it("writes edits through a file store in Sentinel's format: each type's file holds Sentinel's JSON, loaded from the files", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floodgate-dashboard-'));
    afterwards({ close: () => rmSync(dir, { recursive: true, force: true }) });
    const files = { flow: join(dir, 'flow-rules.json'), degrade: join(dir, 'degrade-rules.json') };
    const store: FileRuleSource = fileRuleSource(fg, files, { format: 'sentinel' });
    afterwards(store);
    const { server } = await mount('express', { token: TOKEN, store });
    await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({
        flow: [{ resource: 'api', threshold: 5 }],
        circuitBreakers: [{ resource: 'api', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 10_000 }],
      })
      .expect(200);
    expect(JSON.parse(readFileSync(files.flow, 'utf8'))).toEqual([
      expect.objectContaining({ resource: 'api', grade: 1, count: 5, limitApp: 'default', controlBehavior: 0 }),
    ]);
    expect(JSON.parse(readFileSync(files.degrade, 'utf8'))).toEqual([
      expect.objectContaining({ resource: 'api', grade: 1, count: 0.5, timeWindow: 10 }),
    ]);
    expect(appRules(fg).map((d) => [d.kind, d.source])).toEqual([
      ['flow', 'file'],
      ['circuitBreakers', 'file'],
    ]);
  });

  it('answers 502 when the store cannot write, and applies nothing', async () => {
    const store = { name: 'broken', write: () => Promise.reject(new Error('disk full')) };
    const { server } = await mount('express', { token: TOKEN, store });
    const answer = await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: 5 }] })
      .expect(502);
    expect(answer.body.message).toBe('The rule store "broken" could not write the rules: Error: disk full');
    expect(appFlow(fg)).toEqual([]);
  });

  it('validates before writing to a store: an invalid set never reaches it', async () => {
    const written: unknown[] = [];
    const { server } = await mount('express', {
      token: TOKEN,
      store: { name: 'memory', write: (rules) => void written.push(rules) },
    });
    await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: -5 }] })
      .expect(422);
    expect(written).toEqual([]);
  });
});

describe('dashboard with a Redis store', () => {
  const redisUrl = testRedisUrl();

  it('publishes edits through Redis, and every instance following the key loads them', async () => {
    const key = `fg-test:dashboard:${process.pid}`;
    const clients = [new Redis(redisUrl), new Redis(redisUrl), new Redis(redisUrl)];
    afterwards({ close: () => clients.forEach((c) => c.disconnect()) });
    const other = new Floodgate();
    for (const [engine, client] of [
      [fg, clients[0]!],
      [other, clients[1]!],
    ] as const) {
      const source = await redisRuleSource({ client, key, channel: key, floodgate: engine });
      afterwards(source);
    }
    const store = { name: 'redis', write: (rules: object) => publishRules(clients[2]!, { key, channel: key }, rules) };
    const { server } = await mount('express', { token: TOKEN, store });
    await request(server)
      .put('/fg/api/rules')
      .set(auth)
      .send({ flow: [{ resource: 'api', threshold: 6 }] })
      .expect(200)
      .expect((r) =>
        expect(r.body).toEqual({ message: 'Rules applied through redis', via: 'redis', version: expect.any(String) }),
      );
    for (const engine of [fg, other]) await until(() => appFlow(engine)[0]?.threshold === 6, 'the published rules');
    expect(other.describeRules()).toEqual([expect.objectContaining({ source: 'redis' })]);
    expect(JSON.parse((await clients[2]!.get(key))!)).toMatchObject({ flow: [{ resource: 'api', threshold: 6 }] });
  });
});

describe('dashboard pages', () => {
  it('stops sampling when the last page disconnects', async () => {
    const dash = make({ token: TOKEN, intervalMs: 100 });
    const mounted = await MOUNTS.express!(dash);
    afterwards(mounted);
    await new Promise((resolve) => mounted.server.once('listening', resolve));
    const first = await firstEvent(mounted.server, '/fg/events', 'snapshot');
    expect(dash.pageCount).toBe(1);
    first.close();
    await until(() => dash.pageCount === 0, 'the page to be gone');
  });

  it('refuses pages beyond maxPages with 503', async () => {
    const { server } = await mount('express', { maxPages: 1 });
    const first = await firstEvent(server, '/fg/events', 'snapshot');
    try {
      await request(server).get('/fg/events').expect(503);
    } finally {
      first.close();
    }
  });

  it('answers 404 for unknown paths and 405 for wrong methods', async () => {
    const { server } = await mount('express');
    await request(server).get('/fg/nothing').expect(404);
    await request(server).post('/fg/').expect(405).expect('allow', 'GET, HEAD');
    await request(server).delete('/fg/api/rules').expect(405).expect('allow', 'GET, HEAD, PUT, POST');
    await request(server).post('/fg/api/state').expect(405).expect('allow', 'GET, HEAD');
    await request(server).post('/fg/events').expect(405).expect('allow', 'GET');
  });

  it('leaves paths outside its prefix to the rest of a Koa app', async () => {
    const { server } = await mount('koa');
    await request(server).get('/fgx').expect(200, 'the app');
    await request(server).get('/other').expect(200, 'the app');
  });
});

describe('dashboard reads', () => {
  it('builds one answer for 200 concurrent readers, answers readsPerSecond of them, and 429 to the rest', async () => {
    const app = express();
    app.get('/ping', (_req, res) => void res.send('pong'));
    app.use('/fg', make({ token: TOKEN }).express()); // readsPerSecond: 20
    const server = app.listen(0, '127.0.0.1');
    afterwards({ close: () => closeServer(server) });
    await new Promise((resolve) => server.once('listening', resolve));
    for (let i = 0; i < 300; i++) fg.tryEntry(`GET /r${i}`);
    fg.loadFlowRules(Array.from({ length: 300 }, (_, i) => ({ resource: `GET /r${i}`, threshold: 1e9 })));
    const describe = jest.spyOn(fg, 'describeRules');
    const reads = await Promise.all(Array.from({ length: 200 }, () => request(server).get('/fg/api/state')));
    const statuses = reads.map((r) => r.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(180);
    expect(describe).toHaveBeenCalledTimes(1);
    expect(new Set(reads.filter((r) => r.status === 200).map((r) => r.text)).size).toBe(1);
    const refused = reads.find((r) => r.status === 429)!;
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'floodgate-dashboard:read' });
    await request(server).get('/ping').expect(200, 'pong');
    await clock.advance(1000);
    await request(server).get('/fg/api/state').expect(200);
  });

  it('answers at most pageSize resources and rules, the page asked for, and says where it is', async () => {
    const { server } = await mount('express', { pageSize: 2 });
    for (const name of ['a', 'b', 'c', 'd', 'e']) fg.tryEntry(name);
    fg.loadFlowRules(['a', 'b', 'c'].map((resource) => ({ resource, threshold: 1 })));
    const first = await request(server).get('/fg/api/state').expect(200);
    expect(first.body.resources).toHaveLength(2);
    expect(first.body.resourcePage).toEqual({ page: 0, pages: 3, total: 6 }); // with the dashboard's reads
    expect(first.body.rulePage).toEqual({ page: 0, pages: 3, total: 5 });
    const later = await request(server).get('/fg/api/state?resources=2&rules=2').expect(200);
    expect(later.body.resources.map((r: { name: string }) => r.name)).toEqual(['e', 'floodgate-dashboard:read']);
    expect(later.body.rules.map((d: { resource: string }) => d.resource)).toEqual(['floodgate-dashboard:edit']);
    const rules = await request(server).get('/fg/api/rules?page=1').expect(200);
    expect(rules.body).toMatchObject({ rules: [{ resource: 'c' }, { resource: 'floodgate-dashboard:read' }] });
    await request(server)
      .get('/fg/api/state?rules=-1')
      .expect(400, { message: 'rules must be a page number (0, 1, 2, ...), got "-1"' });
    await request(server).get('/fg/events?resources=x').expect(400);
  });

  it('gives the editor the loaded layer whole', async () => {
    const { server } = await mount('express', { token: TOKEN, pageSize: 1 });
    fg.loadFlowRules(['a', 'b', 'c'].map((resource) => ({ resource, threshold: 1 })));
    const layer = await request(server).get('/fg/api/rules/loaded').expect(200);
    expect(layer.body.flow.map((rule: { resource: string }) => rule.resource)).toEqual(['a', 'b', 'c']);
    expect(Object.keys(layer.body)).toEqual(Object.keys(fg.getRules()));
  });

  it('limits edits carrying the token to editsPerSecond; edits without it spend nothing', async () => {
    const { server } = await mount('express', { token: TOKEN, editsPerSecond: 2 });
    const edit = (headers: Record<string, string>) =>
      request(server).put('/fg/api/rules').set(headers).send({ flow: [] });
    for (let i = 0; i < 5; i++) await edit({}).expect(401);
    await edit(auth).expect(200);
    await edit(auth).expect(200);
    const refused = await edit(auth).expect(429);
    expect(refused.body).toMatchObject({ resource: 'floodgate-dashboard:edit' });
  });

  it('needs the read token, or the edit token, to read when readToken is set; the page itself needs none', async () => {
    const { server } = await mount('express', { token: TOKEN, readToken: 'reader-token' });
    for (const path of ['/fg/api/state', '/fg/api/rules', '/fg/api/rules/loaded', '/fg/events']) {
      await request(server).get(path).expect(401).expect('www-authenticate', 'Bearer');
      await request(server).get(path).set({ authorization: 'Bearer reader-tokeN' }).expect(401);
    }
    await request(server).get('/fg/api/state').set({ authorization: 'Bearer reader-token' }).expect(200);
    await request(server).get('/fg/api/state').set(auth).expect(200);
    await request(server).get('/fg/').expect(200);
    await request(server).get('/fg/dashboard.js').expect(200);
    await request(server)
      .put('/fg/api/rules')
      .set({ authorization: 'Bearer reader-token' })
      .send({ flow: [] })
      .expect(401);
  });

  it('declares its own rules on the engine, shown with the others, and withdraws them when closed', () => {
    const dash = dashboard(fg, { readsPerSecond: 7, editsPerSecond: 3 });
    expect(fg.describeRules()).toEqual([
      expect.objectContaining({
        resource: 'floodgate-dashboard:read',
        layer: 'declared',
        rule: expect.objectContaining({ threshold: 7 }),
      }),
      expect.objectContaining({
        resource: 'floodgate-dashboard:edit',
        layer: 'declared',
        rule: expect.objectContaining({ threshold: 3 }),
      }),
    ]);
    dash.close();
    expect(fg.describeRules()).toEqual([]);
  });
});

describe('dashboard.listen', () => {
  it('binds to 127.0.0.1 by default', async () => {
    const { server, url, close } = await make().listen();
    afterwards({ close });
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
    expect(url).toBe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });

  it('refuses requests naming another host, as a DNS-rebinding page would', async () => {
    const { server, close } = await make().listen();
    afterwards({ close });
    await request(server).get('/api/state').set('host', 'evil.example:80').expect(421);
  });
});

describe('dashboard options', () => {
  it('names an invalid option, its range and its value', () => {
    expect(() => dashboard(fg, { intervalMs: 5 })).toThrow(
      'options.intervalMs must be an integer within [100, 60000], got 5',
    );
    expect(() => dashboard(fg, { token: '' })).toThrow('options.token must be a non-empty string, got ""');
    expect(() => dashboard(fg, { readToken: 5 as never })).toThrow(
      'options.readToken must be a non-empty string, got 5',
    );
    expect(() => dashboard(fg, { pageSize: 0 })).toThrow('options.pageSize must be an integer within [1, 1000], got 0');
    expect(() => dashboard(fg, { store: {} as never })).toThrow(
      'options.store must have a name and a write(rules) method',
    );
    expect(() => dashboard(fg, { tokn: 'x' } as never)).toThrow('options.tokn is not an option');
    expect(() => dashboard({} as never)).toThrow('fg must be a Floodgate engine');
    expect(() => make().koa('fg/')).toThrow("prefix must start with '/' and not end with one");
  });
});
