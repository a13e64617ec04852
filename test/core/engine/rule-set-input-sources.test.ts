import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import Redis from 'ioredis';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type RuleSetOptions } from '@floodgate/core/rules';
import type { RulesRejectedEvent } from '@floodgate/core/metrics';
import { dashboard } from '@floodgate/dashboard';
import { redisRuleSource } from '@floodgate/redis';
import { testRedisUrl } from '../../support/test-services';
import { until } from '../../support/until';

// Issue #24 item 1 and 2: every way into the rules from outside (a watched file, a Redis key and
// channel, the dashboard over HTTP with its token, loadRules) judges a body as it was given, so
// each bad body below is refused by name with rulesRejected (and the source's onError), and the
// rules in force stay. On the old code a file holding null, [], 5 or true emptied every loaded
// kind silently, and a dashboard edit {"__proto__": {...}} answered 200 and emptied every rule.

const IN_FORCE: RuleSetOptions = {
  flow: [{ resource: 'api', threshold: 3 }],
  circuitBreakers: [{ resource: 'api', strategy: 'errorCount', threshold: 2, retryTimeoutMs: 1000 }],
  authority: [{ resource: 'api', origins: ['bad'], strategy: 'deny' }],
};

/** The app's flow rules, without the dashboard's own (DASHBOARD_RESOURCES). */
const appFlow = (engine: Floodgate) =>
  engine.getRules().flow.filter((rule) => !rule.resource.startsWith('floodgate-dashboard:'));

const reserved = (path: string) => ({ path, message: expect.stringContaining('is a reserved key') });
const notAnObject = (shown: string) => ({ path: 'rules', message: `must be an object, got ${shown}` });

/** Each bad body, as text, and the issue it must be refused with. */
const BAD_BODIES: [string, string, object][] = [
  ['null', 'null', notAnObject('null')],
  ['an array', '[]', notAnObject('an array []')],
  ['a number', '5', notAnObject('5')],
  ['true', 'true', notAnObject('true')],
  ['a string', '"str"', notAnObject('"str"')],
  ['a kind that is null', '{"flow":null}', { path: 'flow', message: 'must be an array, got null' }],
  ['an unknown top-level key', '{"flw":[]}', { path: 'flw', message: expect.stringContaining('unknown field') }],
  ['a __proto__ key', '{"__proto__":{"flow":[]}}', reserved('__proto__')],
  ['a constructor key', '{"constructor":{"flow":[]}}', reserved('constructor')],
  [
    'a __proto__ key inside a rule',
    '{"flow":[{"resource":"api","threshold":1,"__proto__":{"threshold":0}}]}',
    reserved('flow[0].__proto__'),
  ],
  [
    'a constructor key inside a rule',
    '{"flow":[{"resource":"api","threshold":1,"constructor":{"threshold":0}}]}',
    reserved('flow[0].constructor'),
  ],
];

let fg: Floodgate;
let rejected: RulesRejectedEvent[];
let errors: unknown[];
const cleanups: (() => unknown)[] = [];

beforeEach(() => {
  fg = new Floodgate();
  fg.loadRules(IN_FORCE);
  rejected = [];
  errors = [];
  fg.on('rulesRejected', (event) => rejected.push(event));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The rules in force stay as they were, and the body was refused once, naming `issue`. */
function expectRefused(issue: object, source: string): void {
  expect(rejected).toEqual([expect.objectContaining({ source, issues: [issue] })]);
  expect(appFlow(fg)).toEqual([expect.objectContaining({ resource: 'api', threshold: 3 })]);
  expect(fg.getRules().circuitBreakers).toEqual([expect.objectContaining({ resource: 'api', threshold: 2 })]);
  expect(fg.getRules().authority).toEqual([expect.objectContaining({ resource: 'api', origins: ['bad'] })]);
}

describe.each(BAD_BODIES)('a rule set holding %s', (_name, body, issue) => {
  it('is refused by loadRules, and the rules in force stay', () => {
    expect(() => fg.loadRules(JSON.parse(body) as RuleSetOptions)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_RULE' }),
    );
    expectRefused(issue, 'api');
  });

  it('is refused from a watched file, with rulesRejected and onError, and the rules in force stay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floodgate-bad-bodies-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify(IN_FORCE));
    const source = fileRuleSource(fg, file, { debounceMs: 10, onError: (error) => errors.push(error) });
    cleanups.push(() => source.close());
    writeFileSync(join(dir, 'next.tmp'), body);
    renameSync(join(dir, 'next.tmp'), file);
    await until(() => rejected.length > 0, 'the rejection', 5000);
    expectRefused(issue, 'file');
    expect(errors).toEqual([rejected[0]!.error]);
  });

  it('is refused from a Redis channel (a real redis-server), with rulesRejected and onError', async () => {
    const key = `fg-test:bad-bodies:${process.pid}:${Math.random().toString(36).slice(2)}`;
    const [reader, writer] = [new Redis(testRedisUrl()), new Redis(testRedisUrl())];
    cleanups.push(() => {
      reader.disconnect();
      writer.disconnect();
    });
    await writer.set(key, JSON.stringify(IN_FORCE));
    const source = await redisRuleSource({
      client: reader,
      key,
      channel: key,
      floodgate: fg,
      onError: (error) => errors.push(error),
    });
    cleanups.push(() => source.close());
    await writer.publish(key, body);
    await until(() => rejected.length > 0, 'the rejection', 5000);
    expectRefused(issue, 'redis');
    expect(errors).toEqual([rejected[0]!.error]);
  });

  it('is refused by the dashboard over HTTP with its token, and the rules in force stay', async () => {
    const dash = dashboard(fg, { token: 'the-token' });
    const app = express();
    app.use('/fg', dash.express());
    const server: Server = app.listen(0, '127.0.0.1');
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    cleanups.push(() => dash.close());
    const answer = await request(server)
      .put('/fg/api/rules')
      .set({ authorization: 'Bearer the-token', 'content-type': 'application/json' })
      .send(body);
    expect(answer.status).toBe(422);
    expect(answer.body.issues).toEqual([issue]);
    expectRefused(issue, 'dashboard');
  });
});

describe('a rule set refused by the dashboard behind express.json()', () => {
  it.each(BAD_BODIES.filter(([, body]) => body.startsWith('{') || body.startsWith('[')))(
    'refuses %s as the body parser produced it',
    async (_name, body, issue) => {
      const dash = dashboard(fg, { token: 'the-token' });
      const app = express();
      app.use(express.json());
      app.use('/fg', dash.express());
      cleanups.push(() => dash.close());
      const answer = await request(app)
        .put('/fg/api/rules')
        .set({ authorization: 'Bearer the-token', 'content-type': 'application/json' })
        .send(body)
        .expect(422);
      expect(answer.body.issues).toEqual([issue]);
      expectRefused(issue, 'dashboard');
    },
  );
});
