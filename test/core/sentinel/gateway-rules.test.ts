import { Floodgate } from '@floodgate/core';
import type { RuleSet, RuleSetOptions } from '@floodgate/core/rules';
import { fromSentinelRules, toSentinelRules } from '@floodgate/core/sentinel';
import { fixture, readIssues, readOne, writeIssues } from './helpers';

/** A gateway flow rule as Sentinel's file data source writes one, with `fields` over its defaults. */
const gw = (fields: object = {}) => ({
  resource: 'route',
  resourceMode: 0,
  grade: 1,
  count: 10,
  intervalSec: 1,
  controlBehavior: 0,
  burst: 0,
  maxQueueingTimeoutMs: 500,
  ...fields,
});

/** Rules as an engine holds them in force, every default resolved. */
function inForce(rules: RuleSetOptions): RuleSet {
  const fg = new Floodgate();
  fg.loadRules(rules);
  return fg.getRules();
}

describe("Sentinel's gateway rules (gw-flow)", () => {
  it('reads the file data source’s gateway rules as hotspot rules keyed by their paramItem, and a route limit as a flow rule', () => {
    const rules = fromSentinelRules(fixture('java-gateway'));
    expect(rules.flow).toEqual([{ resource: 'httpbin_route', metric: 'qps', threshold: 10, behavior: 'reject' }]);
    expect(rules.hotParams).toEqual([
      {
        resource: 'httpbin_route',
        key: { from: 'ip', ipv6Subnet: false },
        metric: 'qps',
        threshold: 5,
        behavior: 'reject',
        durationMs: 1000,
        burstCount: 2,
      },
      {
        resource: 'httpbin_route',
        key: { from: 'header', name: 'X-Sentinel-Flag', match: { strategy: 'contains', pattern: 'Ex' } },
        metric: 'qps',
        threshold: 2,
        behavior: 'reject',
        durationMs: 1000,
        burstCount: 0,
      },
      {
        resource: 'some_customized_api',
        key: { from: 'query', name: 'pa', match: { strategy: 'regex', pattern: 'abc.*' } },
        metric: 'qps',
        threshold: 100,
        behavior: 'throttle',
        durationMs: 60_000,
        burstCount: 0,
        maxQueueingTimeMs: 1000,
      },
      {
        resource: 'some_customized_api',
        key: { from: 'cookie', name: 'session' },
        metric: 'concurrency',
        threshold: 20,
        behavior: 'reject',
        durationMs: 1000,
        burstCount: 0,
      },
      {
        resource: 'another_customized_api',
        key: { from: 'host', match: { strategy: 'prefix', pattern: 'api.' } },
        metric: 'qps',
        threshold: 30,
        behavior: 'reject',
        durationMs: 1000,
        burstCount: 0,
      },
    ]);
  });

  it('reads the dashboard’s entities, their interval in its unit and their null fields as absent', () => {
    const rules = fromSentinelRules(fixture('java-gateway-dashboard'));
    expect(rules.hotParams).toEqual([
      {
        resource: 'httpbin_route',
        key: { from: 'ip', ipv6Subnet: false },
        metric: 'qps',
        threshold: 10,
        behavior: 'reject',
        durationMs: 60_000, // interval 1, intervalUnit 1 (minute)
        burstCount: 0,
      },
    ]);
    expect(rules.flow).toEqual([{ resource: 'some_customized_api', metric: 'qps', threshold: 50, behavior: 'reject' }]);
  });

  it('round-trips: read, written, read again gives the same rules, in Sentinel’s shape', () => {
    for (const set of ['java-gateway', 'java-gateway-dashboard'] as const) {
      const rules = fromSentinelRules(fixture(set));
      const written = toSentinelRules(rules);
      expect(inForce(fromSentinelRules(written))).toEqual(inForce(rules));
      expect(fromSentinelRules(toSentinelRules(fromSentinelRules(written)))).toEqual(fromSentinelRules(written));
      expect(Object.keys(written).sort()).toEqual(['flow', 'gw-api-group', 'gw-flow', 'param-flow']);
    }
    // Without the rules read before, a route limit is a Sentinel flow rule; with them, it stays a gateway rule.
    const previous = fixture('java-gateway');
    const again = toSentinelRules(fromSentinelRules(previous), { previous });
    expect(again['gw-flow']).toEqual(previous['gw-flow']);
    expect(again.flow).toEqual([]);
  });

  it('writes a gateway rule on an API group in API mode, and a new one from its Floodgate form', () => {
    const written = toSentinelRules({
      apiGroups: [{ name: 'checkout', patterns: [{ regex: '/cart/.*' }, '/orders'] }],
      hotParams: [
        { resource: 'checkout', key: { from: 'ip', ipv6Subnet: false }, threshold: 5, durationMs: 2000 },
        { resource: 'GET /users/:id', key: { from: 'header', name: 'x-api-key' }, threshold: 20, behavior: 'throttle' },
      ],
    });
    expect(written['gw-flow']).toEqual([
      {
        resource: 'checkout',
        resourceMode: 1,
        grade: 1,
        count: 5,
        intervalSec: 2,
        controlBehavior: 0,
        burst: 0,
        maxQueueingTimeoutMs: 500,
        paramItem: { parseStrategy: 0 },
      },
      {
        resource: 'GET /users/:id',
        resourceMode: 0,
        grade: 1,
        count: 20,
        intervalSec: 1,
        controlBehavior: 2,
        burst: 0,
        maxQueueingTimeoutMs: 0,
        paramItem: { parseStrategy: 2, fieldName: 'x-api-key' },
      },
    ]);
    expect(written['gw-api-group']).toEqual([
      {
        apiName: 'checkout',
        predicateItems: [
          { pattern: '/cart/.*', matchStrategy: 2 },
          { pattern: '/orders', matchStrategy: 0 },
        ],
      },
    ]);
  });

  it.each([
    [
      'an unknown parseStrategy',
      gw({ paramItem: { parseStrategy: 5 } }),
      'gw-flow[0].paramItem.parseStrategy',
      /^must be one of 0 \(PARAM_PARSE_STRATEGY_CLIENT_IP\), .*4 \(PARAM_PARSE_STRATEGY_COOKIE\), got 5$/,
    ],
    [
      'an unknown matchStrategy',
      gw({ paramItem: { parseStrategy: 0, pattern: '10.', matchStrategy: 4 } }),
      'gw-flow[0].paramItem.matchStrategy',
      /3 \(PARAM_MATCH_STRATEGY_CONTAINS\), got 4$/,
    ],
    [
      'a header item without fieldName',
      gw({ paramItem: { parseStrategy: 2 } }),
      'gw-flow[0].paramItem.fieldName',
      /^is required for parseStrategy 2 \(PARAM_PARSE_STRATEGY_HEADER\)/,
    ],
    [
      'a regex that could backtrack',
      gw({ paramItem: { parseStrategy: 3, fieldName: 'q', pattern: '(a)\\1', matchStrategy: 2 } }),
      'gw-flow[0].paramItem.pattern',
      /backreference/,
    ],
    [
      'a bad header name',
      gw({ paramItem: { parseStrategy: 2, fieldName: 'x key' } }),
      'gw-flow[0].paramItem.fieldName',
      /must be a header name/,
    ],
    [
      'warm-up',
      gw({ controlBehavior: 1, paramItem: { parseStrategy: 0 } }),
      'gw-flow[0].controlBehavior',
      /^1 \(WARM_UP\) is not supported/,
    ],
    ['a fractional count', gw({ count: 1.5 }), 'gw-flow[0].count', /Sentinel truncates/],
    ['a route limit over 2 s', gw({ intervalSec: 2 }), 'gw-flow[0].intervalSec', /^must make 1 second/],
    ['a route limit with a burst', gw({ burst: 3 }), 'gw-flow[0].burst', /^must be 0 for a rule without paramItem/],
    ['an unknown resourceMode', gw({ resourceMode: 2 }), 'gw-flow[0].resourceMode', /RESOURCE_MODE_CUSTOM_API_NAME/],
    ['an interval of 0', gw({ intervalSec: 0 }), 'gw-flow[0].intervalSec', /^must be/],
    ['a field Sentinel does not have', gw({ clusterMode: true }), 'gw-flow[0].clusterMode', /^unknown field/],
  ])('refuses %s, naming the field', (_, rule, path, message) => {
    expect(readIssues('gw-flow', rule)).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it('loads fields Sentinel ignores where they stand: a fieldName for a client IP, a matchStrategy without a pattern, the item index', () => {
    expect(
      readOne(
        'gw-flow',
        gw({ paramItem: { parseStrategy: 0, fieldName: '', matchStrategy: 2, index: 3 } }),
        'hotParams',
      ),
    ).toMatchObject({ key: { from: 'ip', ipv6Subnet: false } });
  });

  it.each([
    [
      'a user property',
      { hotParams: [{ resource: 'r', key: { from: 'user' as const, name: 'id' }, threshold: 1 }] },
      'hotParams[0].key.from',
      /^'user' has no Sentinel equivalent/,
    ],
    [
      'IPv6 clients grouped by subnet',
      { hotParams: [{ resource: 'r', key: { from: 'ip' as const }, threshold: 1 }] },
      'hotParams[0].key.ipv6Subnet',
      /^must be false: Sentinel counts each client address on its own, got 56$/,
    ],
    [
      'items',
      { hotParams: [{ resource: 'r', key: { from: 'host' as const }, threshold: 1, specificItems: { a: 2 } }] },
      'hotParams[0].specificItems',
      /no items/,
    ],
    [
      'a route pattern with a method',
      { apiGroups: [{ name: 'g', patterns: ['POST /cart/*'] }] },
      'apiGroups[0].patterns[0]',
      /^has no Sentinel equivalent/,
    ],
    [
      'a regex pattern for one method',
      { apiGroups: [{ name: 'g', patterns: [{ method: 'GET', regex: '/a' }] }] },
      'apiGroups[0].patterns[0].method',
      /^must be '\*'/,
    ],
  ])('cannot write %s', (_, rules, path, message) => {
    expect(writeIssues(rules)).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it('refuses gateway rules in sentinel-golang’s format, which has none', () => {
    expect(readIssues('gw-flow', gw(), 'go')).toEqual([
      { path: 'gw-flow', message: expect.stringMatching(/^sentinel-golang has no gateway flow rules/) },
    ]);
    expect(
      writeIssues({ hotParams: [{ resource: 'r', key: { from: 'ip', ipv6Subnet: false }, threshold: 1 }] }, 'go'),
    ).toEqual([{ path: 'hotParams[0].key', message: expect.stringMatching(/^has no sentinel-golang equivalent/) }]);
  });
});

describe("Sentinel's API definitions (gw-api-group)", () => {
  it('reads each predicate as a regex over the path: exact, Ant prefix patterns, regexes', () => {
    expect(fromSentinelRules(fixture('java-gateway')).apiGroups).toEqual([
      { name: 'some_customized_api', patterns: [{ regex: '/ahas' }, { regex: '/product(/.*)?' }] },
      { name: 'another_customized_api', patterns: [{ regex: '/foo/.*' }, { regex: '/v1/orders\\.json' }] },
    ]);
  });

  it('matches the paths Sentinel’s matchers match', () => {
    const fg = new Floodgate();
    fg.loadRules(
      fromSentinelRules({
        'gw-api-group': [
          {
            apiName: 'g',
            predicateItems: [
              { pattern: '/a/*/c', matchStrategy: 1 },
              { pattern: '/x/**', matchStrategy: 1 },
              { pattern: '/v1.json', matchStrategy: 0 },
            ],
          },
        ],
      }),
    );
    expect(fg.getRules().apiGroups[0]!.patterns).toEqual([
      { method: '*', regex: '/a/[^/]*/c' },
      { method: '*', regex: '/x(/.*)?' },
      { method: '*', regex: '/v1\\.json' },
    ]);
  });

  it.each([
    [
      'a predicate group',
      { apiName: 'g', predicateItems: [{ items: [] }] },
      'gw-api-group[0].predicateItems[0].items',
      /^is not supported: a predicate group/,
    ],
    [
      'a URI template variable',
      { apiName: 'g', predicateItems: [{ pattern: '/users/{id}', matchStrategy: 1 }] },
      'gw-api-group[0].predicateItems[0].pattern',
      /^URI template variables/,
    ],
    [
      'a regex the linear-time engine cannot run',
      { apiName: 'g', predicateItems: [{ pattern: '/(?=a)', matchStrategy: 2 }] },
      'gw-api-group[0].predicateItems[0].pattern',
      /lookaround/,
    ],
    [
      'an unknown matchStrategy',
      { apiName: 'g', predicateItems: [{ pattern: '/a', matchStrategy: 3 }] },
      'gw-api-group[0].predicateItems[0].matchStrategy',
      /2 \(URL_MATCH_STRATEGY_REGEX\), got 3$/,
    ],
    ['no predicate', { apiName: 'g', predicateItems: [] }, 'gw-api-group[0].predicateItems', /at least one/],
  ])('refuses %s, naming the field', (_, rule, path, message) => {
    expect(readIssues('gw-api-group', rule)).toEqual([{ path, message: expect.stringMatching(message) }]);
  });
});
