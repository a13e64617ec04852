import { Floodgate, type FloodgateEventMap } from '@floodgate/core';
import type { FlowRuleOptions, RuleSetOptions } from '@floodgate/core/rules';
import { publishRules, redisRuleSource, type RedisRuleSource } from '@floodgate/redis';
import Redis from 'ioredis';
import { ManualClock } from '@floodgate/core/testing';
import { until } from '../support/until';
import { testRedisUrl } from '../support/test-services';

const redisUrl = testRedisUrl();
let clients: Redis[];
let sources: RedisRuleSource[];
let key: string;
let n = 0;

beforeEach(() => {
  clients = [];
  sources = [];
  key = `fg-test:rule-source:${process.pid}:${n++}`;
});
afterEach(async () => {
  await Promise.all(sources.map((source) => source.close()));
  for (const client of clients) client.disconnect();
});

function client(connectionName?: string): Redis {
  const c = new Redis(redisUrl, { retryStrategy: () => 5, ...(connectionName ? { connectionName } : {}) });
  clients.push(c);
  return c;
}

async function follow(
  fg: Floodgate,
  onError: (error: unknown) => void = () => undefined,
  connectionName?: string,
): Promise<RedisRuleSource> {
  const source = await redisRuleSource({ client: client(connectionName), key, channel: key, floodgate: fg, onError });
  sources.push(source);
  return source;
}

/** Resolves with the next `name` event of `fg`. */
function next<K extends keyof FloodgateEventMap>(fg: Floodgate, name: K): Promise<FloodgateEventMap[K]> {
  return new Promise((resolve) => {
    const off = fg.on(name, (event) => {
      off();
      resolve(event);
    });
  });
}

const rules = (threshold: number): RuleSetOptions => ({ flow: [{ resource: 'api', threshold }] });

describe('redisRuleSource', () => {
  it('loads the rules in the key at start', async () => {
    await client().set(key, JSON.stringify(rules(7)));
    const fg = new Floodgate();
    await follow(fg);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'api', threshold: 7 })]);
  });

  it('starts with no rules when the key is absent', async () => {
    const fg = new Floodgate();
    await follow(fg);
    expect(fg.getRules().flow).toEqual([]);
  });

  it('applies rules published on the channel in both engines', async () => {
    const [a, b] = [new Floodgate(), new Floodgate()];
    await follow(a);
    await follow(b);
    const loaded = Promise.all([next(a, 'rulesLoaded'), next(b, 'rulesLoaded')]);
    await publishRules(client(), { key, channel: key }, rules(3));
    await loaded;
    for (const fg of [a, b]) expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 3 })]);
    for (const fg of [a, b])
      expect(fg.describeRules()).toEqual([expect.objectContaining({ layer: 'loaded', source: 'redis' })]);
  });

  it('moves a rule from shadow to a share of enforcement and to enforced by publishing, keeping its state', async () => {
    // A manual clock: the value's bucket never refills while the rules are published.
    const fg = new Floodgate({ clock: new ManualClock() });
    await publishRules(
      client(),
      { key, channel: key },
      { hotParams: [{ resource: 'api', paramIndex: 0, threshold: 1, mode: 'shadow' }] },
    );
    await follow(fg);
    expect(fg.getRules().hotParams).toEqual([expect.objectContaining({ mode: 'shadow' })]);
    fg.entry('api', { args: ['u1'] }).exit();
    fg.entry('api', { args: ['u1'] }).exit(); // would be refused: reported, let through
    for (const step of [{ enforcePercent: 50 }, {}]) {
      const loaded = next(fg, 'rulesLoaded');
      await publishRules(
        client(),
        { key, channel: key },
        { hotParams: [{ resource: 'api', paramIndex: 0, threshold: 1, ...step }] },
      );
      await loaded;
    }
    expect(fg.getRules().hotParams[0]).not.toHaveProperty('mode');
    // The bucket u1 spent in shadow is spent under the enforced rule.
    expect(fg.tryEntry('api', { args: ['u1'] })).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
  });

  it('stores published rules in the key, for instances that start later', async () => {
    await publishRules(client(), { key, channel: key }, rules(4));
    const late = new Floodgate();
    await follow(late);
    expect(late.getRules().flow).toEqual([expect.objectContaining({ threshold: 4 })]);
  });

  it('rejects a pushed rule set that fails validation, naming the problems, and keeps the rules in force', async () => {
    const errors: unknown[] = [];
    const fg = new Floodgate();
    await client().set(key, JSON.stringify(rules(5)));
    await follow(fg, (error) => errors.push(error));
    const rejected = next(fg, 'rulesRejected');
    await client().publish(
      key,
      JSON.stringify({
        flow: [
          { resource: 'api', threshold: -1 },
          { resource: 'api', threshold: 2, behavior: 'fast' },
        ],
      }),
    );
    const event = await rejected;
    expect(event.issues).toEqual([
      { path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' },
      {
        path: 'flow[1].behavior',
        message: "must be one of 'reject', 'warmUp', 'throttle', 'warmUpThrottle', 'adaptive', got \"fast\"",
      },
    ]);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 5 })]);
    expect(errors).toEqual([event.error]);
    expect(event.source).toBe('redis');
  });

  it('reports a pushed value that is not JSON and keeps the rules in force', async () => {
    const errors: unknown[] = [];
    const fg = new Floodgate();
    await client().set(key, JSON.stringify(rules(5)));
    await follow(fg, (error) => errors.push(error));
    const rejected = next(fg, 'rulesRejected');
    await client().publish(key, '{ flow: oops');
    await until(() => errors.length === 1, 'the error');
    expect(errors[0]).toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [{ path: '', message: expect.stringContaining('is not valid JSON') }],
    });
    expect(await rejected).toMatchObject({ source: 'redis', error: errors[0] });
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 5 })]);
  });

  it('replaces only the rule kinds an update contains', async () => {
    const fg = new Floodgate();
    await follow(fg);
    fg.loadCircuitBreakerRules([{ resource: 'api', strategy: 'errorCount', threshold: 3, retryTimeoutMs: 1000 }]);
    const loaded = next(fg, 'rulesLoaded');
    await publishRules(client(), { key, channel: key }, rules(9));
    await loaded;
    expect(fg.getRules().circuitBreakers).toHaveLength(1);
    expect(fg.getRules().flow).toHaveLength(1);
  });

  it('reads the key again after its subscriber reconnects, catching updates it missed', async () => {
    const fg = new Floodgate();
    const name = `fg-rule-source-${process.pid}-${n}`;
    await follow(fg, undefined, name);
    const admin = client();
    const loaded = next(fg, 'rulesLoaded');
    // Drop only this test's subscriber connection (its duplicate keeps the client's name).
    const list = (await admin.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `) && / sub=[1-9]/.test(line))
      .map((line) => /id=(\d+)/.exec(line)![1]!);
    expect(ids).toHaveLength(1);
    await admin.client('KILL', 'ID', ids[0]!);
    await admin.set(key, JSON.stringify(rules(6)));
    await loaded;
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 6 })]);
  });

  it('stops applying updates once closed, keeping the rules it loaded', async () => {
    const fg = new Floodgate();
    const source = await follow(fg);
    const loaded = next(fg, 'rulesLoaded');
    await publishRules(client(), { key, channel: key }, rules(2));
    await loaded;
    await source.close();
    await publishRules(client(), { key, channel: key }, rules(8));
    const probe = new Floodgate();
    await follow(probe);
    expect(probe.getRules().flow).toEqual([expect.objectContaining({ threshold: 8 })]);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 2 })]);
  });

  it('throws on a missing key or channel', async () => {
    await expect(redisRuleSource({ client: client(), key: '', channel: key })).rejects.toThrow(
      'key must be a non-empty string',
    );
  });
});

describe('publishRules', () => {
  it('refuses to publish an invalid rule set, writing nothing', async () => {
    const c = client();
    await expect(
      publishRules(c, { key, channel: key }, { flow: [{ resource: 'api', threshold: -5 }] }),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [{ path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -5' }],
    });
    expect(await c.get(key)).toBeNull();
  });

  it('validates the rule set as published: a rule whose fields are inherited is refused, since JSON drops them', async () => {
    const c = client();
    const inherited = Object.create({ resource: 'api', threshold: 5 }) as FlowRuleOptions;
    await expect(publishRules(c, { key, channel: key }, { flow: [inherited] })).rejects.toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [
        { path: 'flow[0].resource', message: 'is required (a non-empty string)' },
        { path: 'flow[0].threshold', message: 'is required (a finite number >= 0)' },
      ],
    });
    expect(await c.get(key)).toBeNull();
  });

  it('validates what JSON makes of a value: a NaN threshold is published as null, and refused', async () => {
    const c = client();
    await expect(
      publishRules(c, { key, channel: key }, { flow: [{ resource: 'api', threshold: Number.NaN }] }),
    ).rejects.toMatchObject({
      issues: [{ path: 'flow[0].threshold', message: expect.stringContaining('got null') }],
    });
    expect(await c.get(key)).toBeNull();
  });

  it('refuses a rule set JSON cannot write, naming why', async () => {
    const c = client();
    const cyclic: Record<string, unknown> = { resource: 'api', threshold: 1 };
    cyclic.self = cyclic;
    await expect(
      publishRules(c, { key, channel: key }, { flow: [cyclic as unknown as FlowRuleOptions] }),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [{ path: 'rules', message: expect.stringContaining('cannot be written as JSON') }],
    });
    expect(await c.get(key)).toBeNull();
  });

  it('publishes what a subscriber accepts: a rule written through toJSON() is loaded as published', async () => {
    const fg = new Floodgate();
    await follow(fg);
    const loaded = next(fg, 'rulesLoaded');
    const rule = { toJSON: () => ({ resource: 'api', threshold: 6 }) } as unknown as FlowRuleOptions;
    await publishRules(client(), { key, channel: key }, { flow: [rule] });
    await loaded;
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'api', threshold: 6 })]);
  });
});
