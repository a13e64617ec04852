import { Floodgate, type FloodgateEventMap } from '@floodgate/core';
import { fromSentinelRules, toSentinelRules } from '@floodgate/core/sentinel';
import { publishRules, redisRuleSource, type RedisRuleSource, type SentinelRedisTargets } from '@floodgate/redis';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { fixture, FIXTURES } from '../core/sentinel/helpers';
import { until } from '../support/until';
import { testRedisUrl } from '../support/test-services';

const redisUrl = testRedisUrl();
let clients: Redis[];
let sources: RedisRuleSource[];
let prefix: string;
let n = 0;

beforeEach(() => {
  clients = [];
  sources = [];
  prefix = `fg-test:sentinel-rules:${process.pid}:${n++}`;
});
afterEach(async () => {
  await Promise.all(sources.map((source) => source.close()));
  for (const client of clients) client.disconnect();
});

function client(): Redis {
  const c = new Redis(redisUrl, { retryStrategy: () => 5 });
  clients.push(c);
  return c;
}

/** A key and channel per type, as a Java service's `RedisDataSource`s would be given. */
function targets(...types: (keyof SentinelRedisTargets)[]): SentinelRedisTargets {
  return Object.fromEntries(
    types.map((type) => [type, { key: `${prefix}:${type}-rules`, channel: `${prefix}:${type}-channel` }]),
  );
}

async function follow(
  fg: Floodgate,
  keys: SentinelRedisTargets,
  format: 'sentinel' | 'sentinel-golang' = 'sentinel',
  onError: (error: unknown) => void = () => undefined,
): Promise<RedisRuleSource> {
  const source = await redisRuleSource({ client: client(), floodgate: fg, format, keys, onError });
  sources.push(source);
  return source;
}

/** What Sentinel's writers do (`RedisDataSource`'s javadoc): MULTI; SET key; PUBLISH channel; EXEC. */
async function sentinelWrite(target: { key: string; channel: string }, list: unknown): Promise<void> {
  const text = JSON.stringify(list);
  await client().multi().set(target.key, text).publish(target.channel, text).exec();
}

function next<K extends keyof FloodgateEventMap>(fg: Floodgate, name: K): Promise<FloodgateEventMap[K]> {
  return new Promise((resolve) => {
    const off = fg.on(name, (event) => {
      off();
      resolve(event);
    });
  });
}

const apiThreshold = (fg: Floodgate) => fg.getRules().flow.find((rule) => rule.resource === 'api')?.threshold;

describe("redisRuleSource in Sentinel's format", () => {
  it.each(Object.keys(FIXTURES) as (keyof typeof FIXTURES)[])(
    "loads the %s lists from each type's key at start, as fromSentinelRules reads them",
    async (set) => {
      const documents = fixture(set);
      const keys = targets(...(Object.keys(documents) as (keyof SentinelRedisTargets)[]));
      for (const [type, list] of Object.entries(documents))
        await client().set(keys[type as 'flow']!.key, JSON.stringify(list));
      const fg = new Floodgate();
      const dialect = FIXTURES[set].dialect;
      await follow(fg, keys, dialect === 'go' ? 'sentinel-golang' : 'sentinel');
      const expected = new Floodgate();
      expected.loadRules(fromSentinelRules(documents, { dialect }));
      expect(fg.getRules()).toEqual(expected.getRules());
      expect(new Set(fg.describeRules().map((rule) => rule.source))).toEqual(new Set(['redis']));
    },
  );

  it("applies a list a Sentinel writer publishes on its type's channel, the other types' rules kept", async () => {
    const keys = targets('flow', 'degrade');
    await client().set(keys.degrade!.key, JSON.stringify([{ resource: 'api', grade: 2, count: 3, timeWindow: 5 }]));
    const fg = new Floodgate();
    await follow(fg, keys);
    const loaded = next(fg, 'rulesLoaded');
    await sentinelWrite(keys.flow!, [{ resource: 'api', grade: 1, count: 12, limitApp: 'default', strategy: 0 }]);
    await loaded;
    expect(apiThreshold(fg)).toBe(12);
    expect(fg.getRules().circuitBreakers).toEqual([expect.objectContaining({ strategy: 'errorCount', threshold: 3 })]);
  });

  it("reads sentinel-golang's flow and isolation keys together into Floodgate's flow rules", async () => {
    const keys = targets('flow', 'isolation');
    await client().set(keys.flow!.key, JSON.stringify([{ resource: 'api', threshold: 10 }]));
    await client().set(keys.isolation!.key, JSON.stringify([{ resource: 'export', threshold: 2 }]));
    const fg = new Floodgate();
    await follow(fg, keys, 'sentinel-golang');
    expect(fg.getRules().flow.map((rule) => [rule.resource, rule.metric])).toEqual([
      ['api', 'qps'],
      ['export', 'concurrency'],
    ]);
  });

  it('rejects a published list holding a rule Floodgate cannot honour, naming it at its Sentinel path, and keeps the rules in force', async () => {
    const keys = targets('flow');
    await client().set(keys.flow!.key, JSON.stringify([{ resource: 'api', count: 3 }]));
    const fg = new Floodgate();
    const errors: unknown[] = [];
    await follow(fg, keys, 'sentinel', (error) => errors.push(error));
    const rejected = next(fg, 'rulesRejected');
    await sentinelWrite(keys.flow!, [{ resource: 'api', count: 9, controlBehavior: 2, maxQueueingTimeMs: 0 }]);
    expect(await rejected).toMatchObject({
      source: 'redis',
      issues: [{ path: 'flow[0].maxQueueingTimeMs', message: 'must be a finite number > 0 and <= 2147483647, got 0' }],
    });
    expect(errors).toHaveLength(1);
    expect(apiThreshold(fg)).toBe(3);
  });

  it("publishes each kind in Sentinel's shape to its type's key and channel, for every follower and for later readers", async () => {
    const keys = targets('flow', 'param-flow');
    const fg = new Floodgate();
    await follow(fg, keys);
    const rules = {
      flow: [{ resource: 'api', threshold: 21 }],
      hotParams: [{ resource: 'api', paramIndex: 0, threshold: 2, specificItems: { vip: 10 } }],
    };
    await publishRules(client(), keys, rules, { format: 'sentinel' });
    // One transaction per type, as Sentinel's writers: the follower applies each list as it comes.
    await until(() => apiThreshold(fg) === 21 && fg.getRules().hotParams.length === 1, 'the published rules', 5000);
    expect(fg.getRules().hotParams).toEqual([expect.objectContaining({ specificItems: { vip: 10 } })]);
    const written = toSentinelRules(rules);
    expect(JSON.parse((await client().get(keys.flow!.key))!)).toEqual(written.flow);
    expect(JSON.parse((await client().get(keys['param-flow']!.key))!)).toEqual(written['param-flow']);
  });

  it('publishes through node-redis as through ioredis', async () => {
    const keys = targets('flow');
    const fg = new Floodgate();
    await follow(fg, keys);
    const nodeRedis = createClient({ url: redisUrl });
    await nodeRedis.connect();
    try {
      await publishRules(nodeRedis, keys, { flow: [{ resource: 'api', threshold: 5 }] }, { format: 'sentinel' });
    } finally {
      await nodeRedis.quit();
    }
    await until(() => apiThreshold(fg) === 5, 'the published rules', 5000);
  });

  it("publishes the rules it read back as they were: the dashboard's ids and wrapped entities kept", async () => {
    const documents = fixture('java-dashboard');
    const keys = targets(...(Object.keys(documents) as (keyof SentinelRedisTargets)[]));
    for (const [type, list] of Object.entries(documents))
      await client().set(keys[type as 'flow']!.key, JSON.stringify(list));
    const fg = new Floodgate();
    await follow(fg, keys);
    await publishRules(client(), keys, fg.getRules(), { format: 'sentinel' });
    for (const [type, list] of Object.entries(documents)) {
      expect([type, JSON.parse((await client().get(keys[type as 'flow']!.key))!)]).toEqual([type, list]);
    }
  });

  it('refuses to publish a kind with rules whose type has no key, writing nothing', async () => {
    const keys = targets('flow');
    const before = JSON.stringify([{ resource: 'api', count: 3 }]);
    await client().set(keys.flow!.key, before);
    await expect(
      publishRules(
        client(),
        keys,
        {
          flow: [{ resource: 'api', threshold: 4 }],
          circuitBreakers: [{ resource: 'api', strategy: 'errorCount', threshold: 1, retryTimeoutMs: 1000 }],
        },
        { format: 'sentinel' },
      ),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [{ path: 'degrade', message: "cannot be published: no key is given for Sentinel's degrade rules" }],
    });
    expect(await client().get(keys.flow!.key)).toBe(before);
  });

  it('refuses to publish what Sentinel cannot express, writing nothing', async () => {
    const keys = targets('flow');
    await expect(
      publishRules(
        client(),
        keys,
        { flow: [{ resource: 'api', metric: 'concurrency', behavior: 'adaptive', threshold: 10 }] },
        { format: 'sentinel' },
      ),
    ).rejects.toMatchObject({
      issues: [{ path: 'flow[0].behavior', message: "'adaptive' has no Sentinel equivalent" }],
    });
    expect(await client().get(keys.flow!.key)).toBeNull();
  });

  it.each([
    ['no keys', {}, /^redisRuleSource\(options\): keys must give the place of at least one Sentinel rule type/],
    [
      "sentinel-golang's isolation rules",
      { isolation: { key: 'k', channel: 'c' } },
      /^redisRuleSource\(options\): keys\.isolation: isolation rules are sentinel-golang's/,
    ],
    [
      'a target without a channel',
      { flow: { key: 'k' } },
      /^redisRuleSource\(options\): keys\.flow must be a \{ key, channel \} of non-empty strings, got an object/,
    ],
  ])('refuses %s at construction', async (_, keys, message) => {
    await expect(
      redisRuleSource({ client: client(), format: 'sentinel', keys: keys as SentinelRedisTargets }),
    ).rejects.toThrow(message);
  });
});
