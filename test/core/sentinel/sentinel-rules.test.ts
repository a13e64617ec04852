import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { fromSentinelRules, toSentinelRules, type SentinelRule, type SentinelRules } from '@floodgate/core/sentinel';
import { fixture, FIXTURES, issuesOf } from './helpers';

const ENTITY_FIELDS = ['id', 'app', 'ip', 'port', 'gmtCreate', 'gmtModified'];

describe('Sentinel rule fixtures', () => {
  it("reads the rules Sentinel's file data source writes, field by field", () => {
    expect(fromSentinelRules(fixture('java-file'))).toEqual({
      flow: [
        {
          resource: 'GET /orders',
          metric: 'qps',
          threshold: 20,
          behavior: 'reject',
          strategy: 'direct',
          limitOrigin: 'default',
        },
        {
          resource: 'POST /checkout',
          metric: 'qps',
          threshold: 100,
          behavior: 'warmUp',
          warmUpPeriodMs: 30_000,
          strategy: 'direct',
          limitOrigin: 'default',
        },
        {
          resource: 'sendSms',
          metric: 'qps',
          threshold: 10,
          behavior: 'throttle',
          maxQueueingTimeMs: 1000,
          strategy: 'direct',
          limitOrigin: 'default',
        },
        {
          resource: 'exportReport',
          metric: 'concurrency',
          threshold: 5,
          behavior: 'reject',
          strategy: 'direct',
          limitOrigin: 'partner-app',
        },
        {
          resource: 'GET /orders/search',
          metric: 'qps',
          threshold: 50,
          behavior: 'reject',
          strategy: 'relate',
          refResource: 'POST /orders',
          limitOrigin: 'default',
        },
        {
          resource: 'GET /catalog',
          metric: 'qps',
          threshold: 300,
          behavior: 'reject',
          strategy: 'direct',
          limitOrigin: 'default',
          cluster: { thresholdType: 'global', fallbackToLocal: true },
        },
      ],
      circuitBreakers: [
        {
          resource: 'GET /orders',
          strategy: 'slowRequestRatio',
          threshold: 0.5,
          maxAllowedRtMs: 200,
          minRequestAmount: 5,
          statIntervalMs: 1000,
          retryTimeoutMs: 10_000,
        },
        {
          resource: 'payment',
          strategy: 'errorRatio',
          threshold: 0.3,
          minRequestAmount: 10,
          statIntervalMs: 5000,
          retryTimeoutMs: 30_000,
        },
        {
          resource: 'inventory',
          strategy: 'errorCount',
          threshold: 20,
          minRequestAmount: 5,
          statIntervalMs: 60_000,
          retryTimeoutMs: 60_000,
        },
      ],
      hotParams: [
        {
          resource: 'getProfile',
          paramIndex: 0,
          metric: 'qps',
          threshold: 5,
          behavior: 'reject',
          durationMs: 1000,
          burstCount: 0,
          maxQueueingTimeMs: 0,
          specificItems: { 42: 0, 'vip-tenant': 50 },
        },
        {
          resource: 'search',
          paramIndex: 1,
          metric: 'qps',
          threshold: 2,
          behavior: 'throttle',
          durationMs: 1000,
          burstCount: 0,
          maxQueueingTimeMs: 200,
          specificItems: {},
        },
        {
          resource: 'login',
          paramIndex: 0,
          metric: 'qps',
          threshold: 10,
          behavior: 'reject',
          durationMs: 60_000,
          burstCount: 3,
          maxQueueingTimeMs: 0,
          specificItems: {},
          cluster: { thresholdType: 'perInstance', fallbackToLocal: false },
        },
        {
          resource: 'download',
          paramIndex: -1,
          metric: 'concurrency',
          threshold: 3,
          behavior: 'reject',
          durationMs: 1000,
          burstCount: 0,
          maxQueueingTimeMs: 0,
          specificItems: {},
        },
      ],
      system: [{ maxCpuUsage: 0.8 }, { maxQps: 2000, maxAvgRtMs: 200, maxConcurrency: 500 }],
      authority: [
        { resource: 'GET /admin', strategy: 'allow', origins: ['web', 'mobile'] },
        { resource: 'GET /catalog', strategy: 'deny', origins: ['scraper'] },
      ],
    });
  });

  it("reads the rules Sentinel's dashboard stores, its entity fields and wrapped rules included", () => {
    const rules = fromSentinelRules(fixture('java-dashboard'));
    expect(rules.flow).toEqual([
      {
        resource: 'GET /orders',
        metric: 'qps',
        threshold: 20,
        behavior: 'reject',
        strategy: 'direct',
        limitOrigin: 'default',
      },
      {
        resource: 'POST /checkout',
        metric: 'qps',
        threshold: 80,
        behavior: 'warmUp',
        warmUpPeriodMs: 15_000,
        strategy: 'direct',
        limitOrigin: 'default',
      },
      {
        resource: 'GET /catalog',
        metric: 'qps',
        threshold: 40,
        behavior: 'reject',
        strategy: 'direct',
        limitOrigin: 'default',
        cluster: { thresholdType: 'perInstance', fallbackToLocal: true },
      },
    ]);
    expect(rules.hotParams).toEqual([
      expect.objectContaining({ resource: 'getProfile', threshold: 10, specificItems: { 7: 100, 'blocked-user': 0 } }),
    ]);
    expect(rules.system).toEqual([{ maxQps: 1500 }]);
    expect(rules.authority).toEqual([{ resource: 'POST /refunds', strategy: 'deny', origins: ['internal-batch'] }]);
    expect(rules.circuitBreakers).toHaveLength(2);
  });

  it('reads the rules sentinel-golang reads, its isolation rules as concurrency flow rules', () => {
    const rules = fromSentinelRules(fixture('go'), { dialect: 'go' });
    expect(rules.flow).toEqual([
      { resource: 'GET /orders', threshold: 100, behavior: 'reject', strategy: 'direct' },
      {
        resource: 'POST /checkout',
        threshold: 200,
        behavior: 'warmUp',
        warmUpPeriodMs: 20_000,
        coldFactor: 3,
        strategy: 'direct',
      },
      { resource: 'sendSms', threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500, strategy: 'direct' },
      { resource: 'GET /search', threshold: 50, behavior: 'reject', strategy: 'relate', refResource: 'POST /orders' },
      { resource: 'exportReport', metric: 'concurrency', threshold: 5 },
    ]);
    expect(rules.circuitBreakers).toEqual([
      {
        resource: 'GET /orders',
        strategy: 'slowRequestRatio',
        threshold: 0.5,
        maxAllowedRtMs: 50,
        minRequestAmount: 10,
        statIntervalMs: 5000,
        bucketCount: 10,
        retryTimeoutMs: 3000,
      },
      {
        resource: 'payment',
        strategy: 'errorRatio',
        threshold: 0.2,
        minRequestAmount: 20,
        statIntervalMs: 2000,
        bucketCount: 1,
        retryTimeoutMs: 5000,
      },
      {
        resource: 'inventory',
        strategy: 'errorCount',
        threshold: 29,
        minRequestAmount: 30,
        statIntervalMs: 3000,
        bucketCount: 1,
        retryTimeoutMs: 30_000,
      },
    ]);
    expect(rules.hotParams).toEqual([
      expect.objectContaining({
        resource: 'getProfile',
        capacity: 10_000,
        specificItems: { 1000: 10001, ximu: 10002, true: 10003, '1.5': 10004 },
      }),
      expect.objectContaining({ resource: 'search', behavior: 'throttle', durationMs: 2000, capacity: 8000 }),
      expect.objectContaining({ resource: 'download', metric: 'concurrency', paramIndex: -1, capacity: 4000 }),
    ]);
    expect(rules.system).toEqual([
      { maxAvgRtMs: 200 },
      { maxConcurrency: 500 },
      { maxQps: 2000 },
      { maxCpuUsage: 0.8 },
    ]);
  });

  it.each(Object.keys(FIXTURES) as (keyof typeof FIXTURES)[])('loads the %s fixtures into an engine', (set) => {
    const fg = new Floodgate();
    const rules = fromSentinelRules(fixture(set), { dialect: FIXTURES[set].dialect });
    fg.loadRules(rules);
    for (const kind of Object.keys(rules) as (keyof typeof rules)[]) {
      expect(fg.getRules()[kind]).toHaveLength(rules[kind]!.length);
    }
  });

  it.each(Object.keys(FIXTURES) as (keyof typeof FIXTURES)[])(
    'writes the %s fixtures back as rules that read the same',
    (set) => {
      const dialect = FIXTURES[set].dialect;
      const rules = fromSentinelRules(fixture(set), { dialect });
      const written = toSentinelRules(rules, { dialect });
      const fg = (r: typeof rules) => {
        const engine = new Floodgate();
        engine.loadRules(r);
        return engine.getRules();
      };
      expect(fg(fromSentinelRules(written, { dialect }))).toEqual(fg(rules));
    },
  );

  it("writes the file data source's rules back as it wrote them, up to its defaults (a null limitApp) and what Floodgate does not keep", () => {
    const original = fixture('java-file');
    const written = toSentinelRules(fromSentinelRules(original));
    const withFlowId = (rule: SentinelRule) =>
      rule.clusterMode === true
        ? { ...rule, clusterConfig: { ...(rule.clusterConfig as object), flowId: expect.any(Number) } }
        : rule;
    expect(written.flow).toEqual(original.flow!.map(withFlowId));
    expect(written.degrade).toEqual(original.degrade);
    expect(written.system).toEqual(original.system);
    expect(written.authority).toEqual(original.authority);
    // The items are a set: written in Floodgate's order of their values.
    const sorted = (items: unknown) => [...(items as SentinelRule[])].sort((a, b) => (a.object! < b.object! ? -1 : 1));
    expect(
      written['param-flow']!.map((rule) => ({ ...rule, paramFlowItemList: sorted(rule.paramFlowItemList) })),
    ).toEqual(
      original['param-flow']!.map((rule) => ({
        ...withFlowId(rule),
        // ParamFlowRule's limitApp is null until set; written as the "default" it means.
        limitApp: 'default',
        // A new item's classType is what its value looks like: "42" was a long, is written an int.
        paramFlowItemList: sorted(rule.paramFlowItemList).map((item) =>
          item.classType === 'long' ? { ...item, classType: 'int' } : item,
        ),
      })),
    );
  });

  it.each(Object.keys(FIXTURES) as (keyof typeof FIXTURES)[])(
    'writes the %s fixtures back exactly as they were, given them as previous',
    (set) => {
      const dialect = FIXTURES[set].dialect;
      const previous = fixture(set);
      const written = toSentinelRules(fromSentinelRules(previous, { dialect }), { dialect, previous });
      // The types the fixtures hold as they were; any other type the kinds read fill is written empty.
      const others = Object.keys(written).filter((type) => !(type in previous));
      expect({ ...written, ...Object.fromEntries(others.map((type) => [type, undefined])) }).toEqual(previous);
      for (const type of others) expect(written[type as keyof typeof written]).toEqual([]);
    },
  );
});

describe('fromSentinelRules', () => {
  it('reports every problem of every list at once, each at its Sentinel path', () => {
    const issues = issuesOf(() =>
      fromSentinelRules({
        flow: [
          { resource: 'ok', count: 1 },
          { resource: 'r', count: 1, strategy: 2 },
        ],
        degrade: [{ resource: 'r', grade: 2, count: -1, timeWindow: 0 }],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      'flow[1].strategy',
      'degrade[0].timeWindow',
      'degrade[0].count',
    ]);
  });

  it("names the problem in its message: RuleValidationError's message lists them", () => {
    expect(() => fromSentinelRules({ flow: [{ resource: 'r', count: 1, strategy: 2 }] })).toThrow(
      /^Sentinel rules rejected: flow\[0\]\.strategy: 2 \(CHAIN\) is not supported/,
    );
  });

  it('reads a null list as no rules, replacing the kind', () => {
    expect(fromSentinelRules({ flow: null, 'param-flow': [] })).toEqual({ flow: [], hotParams: [] });
  });

  it('merges the lists that share a Floodgate kind (Go flow and isolation rules)', () => {
    expect(
      fromSentinelRules(
        { flow: [{ resource: 'a', threshold: 1 }], isolation: [{ resource: 'b', threshold: 2 }] },
        { dialect: 'go' },
      ).flow,
    ).toHaveLength(2);
  });

  it.each([
    ['a list that is not an array', { flow: {} }, { path: 'flow', message: 'must be an array, got an object {}' }],
    ['a rule that is not an object', { flow: [5] }, { path: 'flow[0]', message: 'must be an object, got 5' }],
    [
      'a type Sentinel has not',
      { flows: [] },
      { path: 'flows', message: expect.stringMatching(/^unknown field \(allowed: flow, isolation, degrade, /) },
    ],
    ['rules that are not an object', [], { path: 'rules', message: 'must be an object, got an array []' }],
  ])('refuses %s', (_, rules, issue) => {
    expect(issuesOf(() => fromSentinelRules(rules as never))).toEqual([issue]);
  });

  it('reads an empty list of a type Floodgate does not take as nothing', () => {
    expect(fromSentinelRules({ isolation: [] })).toEqual({});
    expect(fromSentinelRules({ 'gw-flow': [] }, { dialect: 'go' })).toEqual({});
  });

  it('reads empty gateway lists as no gateway rules, every kind they fill emptied', () => {
    expect(fromSentinelRules({ 'gw-flow': [], 'gw-api-group': null })).toEqual({
      hotParams: [],
      flow: [],
      apiGroups: [],
    });
  });

  it('refuses an unknown dialect', () => {
    expect(() => fromSentinelRules({}, { dialect: 'python' as never })).toThrow(
      new TypeError("fromSentinelRules: options.dialect must be 'java' or 'go', got \"python\""),
    );
  });

  it('takes effect on an engine: a Sentinel QPS rule of count 2 passes two calls a second', () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.loadRules(
      fromSentinelRules({ flow: [{ resource: 'r', grade: 1, count: 2, limitApp: 'default', strategy: 0 }] }),
    );
    const outcomes = [1, 2, 3].map(() => fg.tryEntry('r'));
    expect(outcomes.map((o) => ('code' in o ? o.code : 'pass'))).toEqual(['pass', 'pass', 'ERR_FLOW_BLOCKED']);
    clock.advance(1000);
    expect('code' in fg.tryEntry('r')).toBe(false);
  });

  it('takes effect on an engine: a Sentinel exception-count rule opens after more errors than its count', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadRules(
      fromSentinelRules({ degrade: [{ resource: 'r', grade: 2, count: 2, timeWindow: 10, minRequestAmount: 1 }] }),
    );
    for (let i = 0; i < 3; i++) {
      const entry = fg.entry('r');
      entry.traceError(new Error('boom'));
      entry.exit();
    }
    expect(fg.circuitState('r')).toEqual([expect.objectContaining({ state: 'open', retryAfterMs: 10_000 })]);
  });
});

describe('toSentinelRules', () => {
  it('refuses rules that are not valid, at their Floodgate paths', () => {
    expect(issuesOf(() => toSentinelRules({ flow: [{ resource: 'r', threshold: -1 }] }))).toEqual([
      { path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' },
    ]);
  });

  it('reports everything Sentinel cannot express at once', () => {
    const issues = issuesOf(() =>
      toSentinelRules({
        flow: [{ resource: 'r', metric: 'concurrency', behavior: 'adaptive', threshold: 10 }],
        system: [{ maxEventLoopDelayMs: 10 }],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual(['system[0].maxEventLoopDelayMs', 'flow[0].behavior']);
  });

  it('writes only the kinds given, each under its Sentinel type', () => {
    expect(Object.keys(toSentinelRules({ circuitBreakers: [], hotParams: [] }))).toEqual(['degrade', 'param-flow']);
  });

  describe('with the rules read before (previous)', () => {
    const previous: SentinelRules = {
      flow: [
        {
          id: 7,
          app: 'shop',
          resource: 'a',
          count: 10,
          clusterMode: true,
          clusterConfig: { flowId: 1001, thresholdType: 1, fallbackToLocalWhenFail: true },
          gmtCreate: 1,
        },
        { id: 8, resource: 'b', count: 5, refResource: 'ignored', warmUpPeriodSec: 3 },
      ],
      'param-flow': [
        {
          resource: 'p',
          paramIdx: 0,
          count: 5,
          paramFlowItemList: [
            { object: '42', classType: 'long', count: 1 },
            { object: '7', classType: 'java.lang.String', count: 2 },
          ],
        },
      ],
    };

    it('writes an unchanged rule back exactly as it was read', () => {
      const rules = fromSentinelRules(previous);
      expect(toSentinelRules(rules, { previous })).toEqual(previous);
    });

    it('writes a changed cluster rule with the flowId it had', () => {
      const rules = fromSentinelRules(previous);
      const changed = { ...rules, flow: [{ ...rules.flow![0]!, threshold: 20 }, rules.flow![1]!] };
      const written = toSentinelRules(changed, { previous }).flow!;
      expect(written[0]).toMatchObject({ resource: 'a', count: 20, clusterConfig: { flowId: 1001 } });
      expect(written[0]).not.toHaveProperty('id');
      expect(written[1]).toEqual(previous.flow![1]);
    });

    it('gives a second cluster rule of the same resource a flowId of its own', () => {
      const rules = fromSentinelRules(previous);
      const added = { flow: [...rules.flow!, { ...rules.flow![0]!, threshold: 99 }] };
      const ids = toSentinelRules(added, { previous })
        .flow!.filter((rule) => rule.clusterMode === true)
        .map((rule) => (rule.clusterConfig as { flowId: number }).flowId);
      expect(ids).toHaveLength(2);
      expect(ids[0]).toBe(1001);
      expect(ids[1]).not.toBe(1001);
    });

    it("writes a changed hotspot rule's items with the classTypes they had", () => {
      const rules = fromSentinelRules(previous);
      const [rule] = rules.hotParams!;
      const changed = { hotParams: [{ ...rule!, threshold: 9, specificItems: { ...rule!.specificItems, 43: 3 } }] };
      expect(toSentinelRules(changed, { previous })['param-flow']![0]!.paramFlowItemList).toEqual([
        { object: '7', count: 2, classType: 'java.lang.String' },
        { object: '42', count: 1, classType: 'long' },
        { object: '43', count: 3, classType: 'int' },
      ]);
    });

    it('does not reuse previous rules that do not read', () => {
      const broken: SentinelRules = { flow: [{ resource: 'a', count: 10, strategy: 2, id: 1 }] };
      expect(
        toSentinelRules({ flow: [{ resource: 'a', threshold: 10 }] }, { previous: broken }).flow![0],
      ).not.toHaveProperty('id');
    });
  });

  it.each(ENTITY_FIELDS)('never writes the dashboard field %s on a new rule', (field) => {
    expect(toSentinelRules({ flow: [{ resource: 'r', threshold: 1 }] }).flow![0]).not.toHaveProperty(field);
  });
});
