import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type RuleSetOptions } from '@floodgate/core/rules';
import { publishRules, redisRuleSource } from '@floodgate/redis';
import { testRedisUrl } from '../support/test-services';
import { until } from '../support/until';
import { MOUNTS, type Mounted } from './support/mounts';
import { useDashboards } from './support/fixture';

// One rule at a time over HTTP, as the page's forms send them: `api/rules/loaded/<kind>` (POST:
// add) and `api/rules/loaded/<kind>/<index>` (PUT: replace, DELETE: delete), each on the version of
// the loaded layer it read (the ETag of `api/rules/loaded`), validated by the engine within the
// whole layer, applied or written through the store whole.

const TOKEN = 'a-token-for-tests';
const auth = { authorization: `Bearer ${TOKEN}` };
/** The app's loaded rules of a kind, as the layer holds them. */
const loaded = (engine: Floodgate, kind: string) =>
  engine
    .describeRules()
    .filter((d) => d.layer === 'loaded' && d.kind === kind)
    .map((d) => d.rule);

const fixture = useDashboards(TOKEN);
const { mount, afterwards } = fixture;
let fg: Floodgate;
beforeEach(() => ({ fg } = fixture));

/** The version of the loaded layer (its ETag, unquoted), as the page reads it. */
async function versionOf({ server, prefix }: Mounted): Promise<string> {
  const answer = await request(server).get(`${prefix}/api/rules/loaded`).expect(200);
  return (answer.headers.etag as string).replace(/"/g, '');
}

const rulePath = (prefix: string, kind: string, index: number | undefined, version: string) =>
  `${prefix}/api/rules/loaded/${kind}${index === undefined ? '' : `/${index}`}?version=${version}`;

describe.each(Object.keys(MOUNTS))('one rule at a time, mounted on %s', (name) => {
  it('adds, replaces and deletes one rule, each on the version it read, and answers the next version', async () => {
    const mounted = await mount(name);
    const { server, prefix } = mounted;
    fg.loadFlowRules([{ resource: 'kept', threshold: 7 }]);
    const v0 = await versionOf(mounted);
    const added = await request(server)
      .post(rulePath(prefix, 'flow', undefined, v0))
      .set(auth)
      .send({ resource: 'api', threshold: 3 })
      .expect(200);
    expect(added.body).toEqual({
      message: 'Rule added through engine',
      via: 'engine',
      version: await versionOf(mounted),
      kind: 'flow',
      index: 1,
    });
    expect(loaded(fg, 'flow')).toEqual([
      expect.objectContaining({ resource: 'kept', threshold: 7 }),
      expect.objectContaining({ resource: 'api', threshold: 3 }),
    ]);
    const replaced = await request(server)
      .put(rulePath(prefix, 'flow', 1, added.body.version))
      .set(auth)
      .send({ resource: 'api', threshold: 5, behavior: 'throttle' })
      .expect(200);
    expect(replaced.body).toMatchObject({ message: 'Rule replaced through engine', kind: 'flow', index: 1 });
    expect(loaded(fg, 'flow')[1]).toMatchObject({ threshold: 5, behavior: 'throttle', maxQueueingTimeMs: 500 });
    const deleted = await request(server)
      .delete(rulePath(prefix, 'flow', 0, replaced.body.version))
      .set(auth)
      .expect(200);
    expect(deleted.body).toEqual({
      message: 'Rule deleted through engine',
      via: 'engine',
      version: expect.any(String),
    });
    expect(loaded(fg, 'flow')).toEqual([expect.objectContaining({ resource: 'api', threshold: 5 })]);
    expect(fg.describeRules().find((d) => d.resource === 'api')).toMatchObject({ source: 'dashboard' });
  });

  it('refuses an edit made on a version that has changed since with 409 and the version now, and applies nothing', async () => {
    const mounted = await mount(name);
    const { server, prefix } = mounted;
    const read = await versionOf(mounted);
    fg.loadFlowRules([{ resource: 'someone-else', threshold: 1 }]);
    const answer = await request(server)
      .post(rulePath(prefix, 'flow', undefined, read))
      .set(auth)
      .send({ resource: 'api', threshold: 3 })
      .expect(409);
    expect(answer.body).toEqual({
      message: `The loaded rules changed since version "${read}" was read; nothing was applied. Read them again and redo the edit.`,
      version: await versionOf(mounted),
    });
    expect(loaded(fg, 'flow')).toEqual([expect.objectContaining({ resource: 'someone-else' })]);
  });

  it('answers the problems of a rule by path, each with its field in the rule, and applies nothing', async () => {
    const mounted = await mount(name);
    const { server, prefix } = mounted;
    fg.loadFlowRules([{ resource: 'kept', threshold: 7 }]);
    const rejected: string[] = [];
    fg.on('rulesRejected', ({ source }) => rejected.push(source));
    const answer = await request(server)
      .post(rulePath(prefix, 'hotParams', undefined, await versionOf(mounted)))
      .set(auth)
      .send({ resource: 'api', key: { from: 'header' }, threshold: -1, colour: 'red' })
      .expect(422);
    expect(answer.body.message).toBe('Rule rejected; nothing was applied');
    expect(answer.body.issues).toEqual(
      expect.arrayContaining([
        { path: 'hotParams[0].threshold', field: 'threshold', message: expect.stringContaining('got -1') },
        { path: 'hotParams[0].key.name', field: 'key.name', message: expect.stringContaining('is required') },
        { path: 'hotParams[0].colour', field: 'colour', message: expect.stringContaining('unknown field') },
      ]),
    );
    expect(rejected).toEqual(['dashboard']);
    expect(loaded(fg, 'hotParams')).toEqual([]);
    expect(loaded(fg, 'flow')).toEqual([expect.objectContaining({ resource: 'kept' })]);
  });
});

describe('one rule at a time: what is refused', () => {
  it('needs the token, JSON for a rule, and the version; a delete sends no body', async () => {
    const mounted = await mount();
    const { server } = mounted;
    const version = await versionOf(mounted);
    const rule = { resource: 'api', threshold: 1 };
    await request(server)
      .post(rulePath('/fg', 'flow', undefined, version))
      .send(rule)
      .expect(401);
    await request(server)
      .post(rulePath('/fg', 'flow', undefined, version))
      .set({ authorization: `Bearer ${TOKEN}x` })
      .send(rule)
      .expect(401);
    await request(server)
      .post(rulePath('/fg', 'flow', undefined, version))
      .set(auth)
      .set('content-type', 'text/plain')
      .send(JSON.stringify(rule))
      .expect(415);
    const missing = await request(server).post('/fg/api/rules/loaded/flow').set(auth).send(rule).expect(400);
    expect(missing.body.message).toContain('version is required');
    await request(server).post('/fg/api/rules/loaded/flow?version=a%20b').set(auth).send(rule).expect(400);
    await request(server)
      .delete(rulePath('/fg', 'flow', 0, version))
      .expect(401);
    expect(loaded(fg, 'flow')).toEqual([]);
    fg.loadFlowRules([rule]);
    await request(server)
      .delete(rulePath('/fg', 'flow', 0, await versionOf(mounted)))
      .set(auth)
      .expect(200);
    expect(loaded(fg, 'flow')).toEqual([]);
  });

  it("keeps the dashboard's protections: a cross-site form carries no token, and standalone answers only its own host", async () => {
    const mounted = await mount('standalone');
    const version = await versionOf(mounted);
    // What a page on another site can send without a preflight: a form, with no authorization header.
    await request(mounted.server)
      .post(`/api/rules/loaded/flow?version=${version}`)
      .type('form')
      .send({ resource: 'api', threshold: '0' })
      .expect(401);
    for (const path of [`/api/rules/loaded/flow?version=${version}`, '/api/resources', '/rule-forms.json'])
      await request(mounted.server).post(path).set('host', 'evil.example:80').set(auth).send({}).expect(421);
    await request(mounted.server).get('/api/resources').set('host', 'evil.example:80').expect(421);
    expect(loaded(fg, 'flow')).toEqual([]);
  });

  it('is read-only without a token: a rule edit is refused with 403', async () => {
    const mounted = await mount('express', {});
    await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, await versionOf(mounted)))
      .set(auth)
      .send({ resource: 'api', threshold: 1 })
      .expect(403);
  });

  it('answers 404 for a kind the engine does not have and a position it has no rule at, 405 for other methods', async () => {
    const mounted = await mount();
    const { server } = mounted;
    const version = await versionOf(mounted);
    const kind = await request(server)
      .post(rulePath('/fg', 'flw', undefined, version))
      .set(auth)
      .send({})
      .expect(404);
    expect(kind.body.message).toBe(`No rule kind "flw" (kinds: ${Object.keys(fg.getRules()).join(', ')})`);
    await request(server)
      .post(rulePath('/fg', '__proto__', undefined, version))
      .set(auth)
      .send({})
      .expect(404);
    const at = await request(server)
      .put(rulePath('/fg', 'flow', 0, version))
      .set(auth)
      .send({})
      .expect(404);
    expect(at.body.message).toBe('No loaded flow rule at position 0 (there are 0)');
    await request(server).put('/fg/api/rules/loaded/flow/-1?version=x').set(auth).send({}).expect(404);
    await request(server).put('/fg/api/rules/loaded/flow/1e3?version=x').set(auth).send({}).expect(404);
    await request(server).get('/fg/api/rules/loaded/flow').expect(405).expect('allow', 'POST');
    await request(server).post('/fg/api/rules/loaded/flow/0').expect(405).expect('allow', 'PUT, DELETE');
  });

  it('refuses a rule with a prototype key, as sent, before anything merges it', async () => {
    const mounted = await mount();
    const answer = await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, await versionOf(mounted)))
      .set(auth)
      .set('content-type', 'application/json')
      .send('{"resource":"api","threshold":1,"__proto__":{"polluted":true}}')
      .expect(422);
    expect(answer.body.issues).toEqual([
      { path: 'flow[0].__proto__', field: '__proto__', message: expect.stringContaining('reserved key') },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(loaded(fg, 'flow')).toEqual([]);
  });

  it('refuses a body that is not JSON (400, announced) or over the limit (413)', async () => {
    const mounted = await mount('express', { token: TOKEN, maxBodyBytes: 1024 });
    const version = await versionOf(mounted);
    const rejected: string[] = [];
    fg.on('rulesRejected', ({ source }) => rejected.push(source));
    const bad = await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, version))
      .set(auth)
      .set('content-type', 'application/json')
      .send('{"resource":')
      .expect(400);
    expect(bad.body.issues).toEqual([{ path: '', message: expect.stringContaining('is not valid JSON') }]);
    expect(rejected).toEqual(['dashboard']);
    await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, version))
      .set(auth)
      .send({ resource: 'x'.repeat(2000), threshold: 1 })
      .expect(413);
  });

  it('limits rule edits carrying the token to editsPerSecond', async () => {
    const mounted = await mount('express', { token: TOKEN, editsPerSecond: 2 });
    const edit = () =>
      request(mounted.server)
        .delete(rulePath('/fg', 'flow', 0, 'v'))
        .set(auth);
    await edit().expect(409);
    await edit().expect(409);
    const refused = await edit().expect(429);
    expect(refused.body).toMatchObject({ resource: 'floodgate-dashboard:edit' });
  });

  it('keeps every change when edits arrive together: each made on the version it names, one at a time', async () => {
    const mounted = await mount('express', { token: TOKEN, editsPerSecond: 1000 });
    const version = await versionOf(mounted);
    const add = (resource: string) =>
      request(mounted.server)
        .post(rulePath('/fg', 'flow', undefined, version))
        .set(auth)
        .send({ resource, threshold: 1 });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map(add));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const rules = loaded(fg, 'flow') as { resource: string }[];
    expect(rules).toHaveLength(1);
    expect(['a', 'b', 'c', 'd', 'e']).toContain(rules[0]!.resource);
  });

  it('takes the whole layer with a version: one made on a layer changed since is 409', async () => {
    const mounted = await mount();
    const read = await versionOf(mounted);
    fg.loadFlowRules([{ resource: 'someone-else', threshold: 1 }]);
    await request(mounted.server)
      .put(`/fg/api/rules?version=${read}`)
      .set(auth)
      .send({ flow: [{ resource: 'mine', threshold: 1 }] })
      .expect(409);
    expect(loaded(fg, 'flow')).toEqual([expect.objectContaining({ resource: 'someone-else' })]);
    await request(mounted.server)
      .put(`/fg/api/rules?version=${await versionOf(mounted)}`)
      .set(auth)
      .send({ flow: [{ resource: 'mine', threshold: 1 }] })
      .expect(200);
    expect(loaded(fg, 'flow')).toEqual([expect.objectContaining({ resource: 'mine' })]);
  });
});

describe('one rule at a time through a store', () => {
  it('writes the whole layer through a file store: the file holds every rule, loaded from the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floodgate-rule-editor-'));
    afterwards({ close: () => rmSync(dir, { recursive: true, force: true }) });
    const file = join(dir, 'rules.json');
    const store = fileRuleSource(fg, file);
    afterwards(store);
    await store.write({ flow: [{ resource: 'kept', threshold: 7 }] });
    const mounted = await mount('express', { token: TOKEN, store });
    const answer = await request(mounted.server)
      .post(rulePath('/fg', 'hotParams', undefined, await versionOf(mounted)))
      .set(auth)
      .send({ resource: 'GET /users/:id', key: { from: 'ip' }, threshold: 2 })
      .expect(200);
    expect(answer.body).toMatchObject({ message: 'Rule added through file', via: 'file', kind: 'hotParams', index: 0 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      flow: [{ resource: 'kept', threshold: 7 }],
      hotParams: [{ resource: 'GET /users/:id', key: { from: 'ip' }, threshold: 2 }],
    });
    expect(fg.describeRules().map((d) => [d.kind, d.source])).toContainEqual(['hotParams', 'file']);
    expect(answer.body.version).toBe(await versionOf(mounted));
  });

  it('edits the rules it wrote while the instance has not loaded them back, and refuses the version before them', async () => {
    const written: RuleSetOptions[] = [];
    // A store the engine follows later (as a Redis message arrives): the test loads what it holds.
    const store = { name: 'later', write: (rules: RuleSetOptions) => void written.push(rules) };
    const mounted = await mount('express', { token: TOKEN, store });
    const v0 = await versionOf(mounted);
    const first = await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, v0))
      .set(auth)
      .send({ resource: 'a', threshold: 1 })
      .expect(200);
    expect(loaded(fg, 'flow')).toEqual([]);
    expect(await versionOf(mounted)).toBe(first.body.version);
    await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, v0))
      .set(auth)
      .send({ resource: 'lost', threshold: 1 })
      .expect(409);
    const second = await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, first.body.version))
      .set(auth)
      .send({ resource: 'b', threshold: 2 })
      .expect(200);
    expect(written).toHaveLength(2);
    expect(written[1]!.flow).toEqual([
      expect.objectContaining({ resource: 'a', threshold: 1 }),
      { resource: 'b', threshold: 2 },
    ]);
    fg.loadRules(written[1]!, { source: 'later' });
    expect(await versionOf(mounted)).toBe(second.body.version);
  });

  it('answers 504 when the store has not written within storeTimeoutMs, and holds no later edit behind it', async () => {
    // A store that never settles (Redis down, its client queueing commands), then one that writes.
    const written: RuleSetOptions[] = [];
    let stalled = true;
    const store = {
      name: 'stalled',
      write: (rules: RuleSetOptions) => (stalled ? new Promise<void>(() => undefined) : void written.push(rules)),
    };
    const mounted = await mount('express', { token: TOKEN, store, storeTimeoutMs: 2000 });
    const v0 = await versionOf(mounted);
    const pending = request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, v0))
      .set(auth)
      .send({ resource: 'a', threshold: 1 })
      .then((answer) => answer);
    await until(() => fixture.clock.pendingSleeps > 0);
    fixture.clock.advance(2000);
    const answer = await pending;
    expect(answer.status).toBe(504);
    expect(answer.body.message).toContain('did not write the rules within 2000 ms');
    stalled = false;
    await request(mounted.server)
      .post(rulePath('/fg', 'flow', undefined, v0))
      .set(auth)
      .send({ resource: 'b', threshold: 2 })
      .expect(200);
    expect(written).toEqual([expect.objectContaining({ flow: [{ resource: 'b', threshold: 2 }] })]);
  });

  it('edits in a row through Redis, each on the version the last answered, all land on every instance', async () => {
    const redisUrl = testRedisUrl();
    const key = `fg-test:rule-editor:${process.pid}`;
    const clients = [new Redis(redisUrl), new Redis(redisUrl)];
    afterwards({ close: () => clients.forEach((c) => c.disconnect()) });
    const source = await redisRuleSource({ client: clients[0]!, key, channel: key, floodgate: fg });
    afterwards(source);
    const store = { name: 'redis', write: (rules: object) => publishRules(clients[1]!, { key, channel: key }, rules) };
    const mounted = await mount('express', { token: TOKEN, store });
    let version = await versionOf(mounted);
    for (const resource of ['a', 'b', 'c']) {
      const answer = await request(mounted.server)
        .post(rulePath('/fg', 'flow', undefined, version))
        .set(auth)
        .send({ resource, threshold: 1 })
        .expect(200);
      version = answer.body.version;
    }
    await until(() => loaded(fg, 'flow').length === 3, 'the published rules');
    expect(loaded(fg, 'flow').map((rule) => (rule as { resource: string }).resource)).toEqual(['a', 'b', 'c']);
    expect(await versionOf(mounted)).toBe(version);
  });
});

describe('the resource picker and the forms', () => {
  it('lists the resources the engine has seen, searched and a page at a time', async () => {
    const mounted = await mount('express', { token: TOKEN, pageSize: 2 });
    for (const name of ['GET /users/:id', 'GET /users/me', 'POST /orders']) fg.tryEntry(name);
    const page = await request(mounted.server).get('/fg/api/resources?q=USERS&page=0').expect(200);
    expect(page.body).toEqual({
      query: 'USERS',
      resources: ['GET /users/:id', 'GET /users/me'],
      resourcePage: { page: 0, pages: 1, total: 2 },
    });
    const all = await request(mounted.server).get('/fg/api/resources?page=1').expect(200);
    expect(all.body.resourcePage).toEqual({ page: 1, pages: 2, total: 4 }); // with the dashboard's reads
    await request(mounted.server)
      .get(`/fg/api/resources?q=${'x'.repeat(1025)}`)
      .expect(400);
    await request(mounted.server).get('/fg/api/resources?page=x').expect(400);
  });

  it('needs the read token to list resources when reads need one; the forms need none', async () => {
    const mounted = await mount('express', { token: TOKEN, readToken: 'reader' });
    await request(mounted.server).get('/fg/api/resources').expect(401);
    await request(mounted.server).get('/fg/api/resources').set({ authorization: 'Bearer reader' }).expect(200);
    const forms = await request(mounted.server).get('/fg/rule-forms.json').expect(200);
    expect(forms.headers['content-security-policy']).toContain("default-src 'none'");
    expect(Object.keys(forms.body)).toEqual(Object.keys(fg.getRules()));
    expect(forms.body.flow.fields).toContainEqual(expect.objectContaining({ name: 'behavior', default: 'reject' }));
    await request(mounted.server).post('/fg/rule-forms.json').expect(405);
  });

  it('gives the loaded layer with its version as ETag, which changes with the rules', async () => {
    const mounted = await mount();
    const before = await request(mounted.server).get('/fg/api/rules/loaded').expect(200);
    expect(before.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    fg.loadFlowRules([{ resource: 'api', threshold: 1 }]);
    const after = await request(mounted.server).get('/fg/api/rules/loaded').expect(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.body.flow).toEqual([expect.objectContaining({ resource: 'api' })]);
  });
});
