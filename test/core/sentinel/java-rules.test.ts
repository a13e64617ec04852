import { fromSentinelRules, toSentinelRules } from '@floodgate/core/sentinel';
import { readIssues, readOne, writeIssues } from './helpers';

const CLUSTER_CONFIG = {
  flowId: 12,
  thresholdType: 0,
  fallbackToLocalWhenFail: true,
  strategy: 0,
  sampleCount: 10,
  windowIntervalMs: 1000,
  resourceTimeout: 2000,
  resourceTimeoutStrategy: 0,
  acquireRefuseStrategy: 0,
  clientOfflineTime: 2000,
};

describe('Sentinel (Java) flow rules', () => {
  const FLOW = { resource: 'r', metric: 'qps', behavior: 'reject', strategy: 'direct', limitOrigin: 'default' };

  it.each([
    ['a QPS rule with nothing but its count', { resource: 'r', count: 10 }, { ...FLOW, threshold: 10 }],
    [
      'a THREAD-grade rule as a concurrency rule',
      { resource: 'r', grade: 0, count: 4 },
      { ...FLOW, metric: 'concurrency', threshold: 4 },
    ],
    [
      'warm-up with warmUpPeriodSec in ms',
      { resource: 'r', count: 10, controlBehavior: 1, warmUpPeriodSec: 5 },
      { ...FLOW, threshold: 10, behavior: 'warmUp', warmUpPeriodMs: 5000 },
    ],
    [
      "warm-up with Sentinel's default warmUpPeriodSec (10)",
      { resource: 'r', count: 10, controlBehavior: 1 },
      { ...FLOW, threshold: 10, behavior: 'warmUp', warmUpPeriodMs: 10_000 },
    ],
    [
      'the rate limiter as throttle, with its queue',
      { resource: 'r', count: 10, controlBehavior: 2, maxQueueingTimeMs: 300 },
      { ...FLOW, threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 300 },
    ],
    [
      "the rate limiter with Sentinel's default queue (500 ms)",
      { resource: 'r', count: 10, controlBehavior: 2 },
      { ...FLOW, threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500 },
    ],
    [
      'the warm-up rate limiter as warmUpThrottle',
      { resource: 'r', count: 10, controlBehavior: 3, warmUpPeriodSec: 2, maxQueueingTimeMs: 100 },
      { ...FLOW, threshold: 10, behavior: 'warmUpThrottle', warmUpPeriodMs: 2000, maxQueueingTimeMs: 100 },
    ],
    [
      'strategy 1 (RELATE) as relate',
      { resource: 'r', count: 10, strategy: 1, refResource: 'writes' },
      { ...FLOW, threshold: 10, strategy: 'relate', refResource: 'writes' },
    ],
    [
      'limitApp "other" as limitOrigin "other"',
      { resource: 'r', count: 10, limitApp: 'other' },
      { ...FLOW, threshold: 10, limitOrigin: 'other' },
    ],
    [
      'a named limitApp as that origin',
      { resource: 'r', count: 10, limitApp: 'partner' },
      { ...FLOW, threshold: 10, limitOrigin: 'partner' },
    ],
    ['an empty limitApp as every caller', { resource: 'r', count: 10, limitApp: '' }, { ...FLOW, threshold: 10 }],
    [
      'cluster mode, AVG_LOCAL as perInstance',
      { resource: 'r', count: 10, clusterMode: true, clusterConfig: CLUSTER_CONFIG },
      { ...FLOW, threshold: 10, cluster: { thresholdType: 'perInstance', fallbackToLocal: true } },
    ],
    [
      'cluster mode, GLOBAL as global, without falling back',
      {
        resource: 'r',
        count: 10,
        clusterMode: true,
        clusterConfig: { flowId: 3, thresholdType: 1, fallbackToLocalWhenFail: false },
      },
      { ...FLOW, threshold: 10, cluster: { thresholdType: 'global', fallbackToLocal: false } },
    ],
    [
      'a clusterConfig of any content on a rule not in cluster mode, unread (as Sentinel)',
      { resource: 'r', count: 10, clusterMode: false, clusterConfig: { sampleCount: 3, thresholdType: 9 } },
      { ...FLOW, threshold: 10 },
    ],
    [
      'fields Sentinel ignores where they stand, whatever their value',
      { resource: 'r', count: 10, refResource: 'x', warmUpPeriodSec: -1, maxQueueingTimeMs: 0 },
      { ...FLOW, threshold: 10 },
    ],
    [
      'null fields (as Jackson writes absent ones)',
      { resource: 'r', count: 10, refResource: null, clusterConfig: null, limitApp: null, id: null },
      { ...FLOW, threshold: 10 },
    ],
    [
      "the dashboard's entity fields",
      { id: 3, app: 'shop', ip: '10.0.0.1', port: 8720, gmtCreate: 1, gmtModified: 2, resource: 'r', count: 10 },
      { ...FLOW, threshold: 10 },
    ],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('flow', rule, 'flow')).toEqual(expected);
  });

  it.each([
    [
      'strategy 2 (CHAIN), which needs call contexts',
      { resource: 'r', count: 1, strategy: 2, refResource: 'entry' },
      {
        path: 'flow[0].strategy',
        message:
          '2 (CHAIN) is not supported: a CHAIN rule limits only the calls entering through one context (refResource names it), and Floodgate has no call contexts; put the rule on the resource of that entry point',
      },
    ],
    [
      'an unknown strategy',
      { resource: 'r', count: 1, strategy: 3 },
      { path: 'flow[0].strategy', message: 'must be one of 0 (DIRECT), 1 (RELATE), 2 (CHAIN), got 3' },
    ],
    [
      'an unknown grade',
      { resource: 'r', count: 1, grade: 2 },
      { path: 'flow[0].grade', message: 'must be one of 0 (THREAD), 1 (QPS), got 2' },
    ],
    [
      'an unknown controlBehavior',
      { resource: 'r', count: 1, controlBehavior: 4 },
      {
        path: 'flow[0].controlBehavior',
        message: 'must be one of 0 (DEFAULT), 1 (WARM_UP), 2 (RATE_LIMITER), 3 (WARM_UP_RATE_LIMITER), got 4',
      },
    ],
    [
      'a controlBehavior on a THREAD-grade rule, which Sentinel ignores',
      { resource: 'r', count: 1, grade: 0, controlBehavior: 2 },
      {
        path: 'flow[0].controlBehavior',
        message:
          'must be 0 (DEFAULT) for a THREAD-grade rule: Sentinel ignores it there (it always rejects over the count), got 2',
      },
    ],
    [
      'a regex resource',
      { resource: 'GET /.*', count: 1, regex: true },
      {
        path: 'flow[0].regex',
        message:
          'true is not supported: a Floodgate rule names one resource exactly (regex resources are not supported)',
      },
    ],
    [
      'RELATE without refResource',
      { resource: 'r', count: 1, strategy: 1 },
      { path: 'flow[0].refResource', message: 'is required when strategy is 1 (RELATE), got undefined' },
    ],
    [
      'a warm-up of 0 s',
      { resource: 'r', count: 1, controlBehavior: 1, warmUpPeriodSec: 0 },
      { path: 'flow[0].warmUpPeriodSec', message: 'must be a safe integer within [1, 2147483], got 0' },
    ],
    [
      'a warm-up of a fraction of a second',
      { resource: 'r', count: 1, controlBehavior: 1, warmUpPeriodSec: 1.5 },
      { path: 'flow[0].warmUpPeriodSec', message: 'must be a safe integer within [1, 2147483], got 1.5' },
    ],
    [
      'a rate limiter with a 0 ms queue, which Sentinel ignores as invalid',
      { resource: 'r', count: 1, controlBehavior: 2, maxQueueingTimeMs: 0 },
      { path: 'flow[0].maxQueueingTimeMs', message: 'must be a finite number > 0 and <= 2147483647, got 0' },
    ],
    [
      'a negative count, as Floodgate validates it, at count',
      { resource: 'r', count: -1 },
      { path: 'flow[0].count', message: 'must be a finite number >= 0, got -1' },
    ],
    [
      'a rule without a count',
      { resource: 'r' },
      { path: 'flow[0].count', message: 'is required (a finite number >= 0)' },
    ],
    [
      'a rule without a resource',
      { count: 1 },
      { path: 'flow[0].resource', message: 'is required (a non-empty string)' },
    ],
    [
      'a field Sentinel has not',
      { resource: 'r', count: 1, treshold: 5 },
      { path: 'flow[0].treshold', message: expect.stringMatching(/^unknown field \(allowed: resource, limitApp, /) },
    ],
    [
      'cluster mode without a clusterConfig',
      { resource: 'r', count: 1, clusterMode: true },
      {
        path: 'flow[0].clusterConfig',
        message: 'is required when clusterMode is true (Sentinel ignores a cluster rule without it)',
      },
    ],
    [
      'cluster mode without a flowId',
      { resource: 'r', count: 1, clusterMode: true, clusterConfig: { thresholdType: 1 } },
      { path: 'flow[0].clusterConfig.flowId', message: 'is required (a safe integer >= 1)' },
    ],
    [
      "the token server's BORROW_REF strategy",
      { resource: 'r', count: 1, clusterMode: true, clusterConfig: { ...CLUSTER_CONFIG, strategy: 1 } },
      {
        path: 'flow[0].clusterConfig.strategy',
        message: "1 (BORROW_REF) is not supported: Sentinel's token server does not implement it (it ignores the rule)",
      },
    ],
    [
      'a cluster window of another size',
      { resource: 'r', count: 1, clusterMode: true, clusterConfig: { ...CLUSTER_CONFIG, windowIntervalMs: 2000 } },
      {
        path: 'flow[0].clusterConfig.windowIntervalMs',
        message:
          "must be 1000 (Sentinel's default): Floodgate's shared count is a one-second sliding window it does not size per rule, got 2000",
      },
    ],
    [
      'a cluster window of other buckets',
      { resource: 'r', count: 1, clusterMode: true, clusterConfig: { ...CLUSTER_CONFIG, sampleCount: 5 } },
      {
        path: 'flow[0].clusterConfig.sampleCount',
        message:
          "must be 10 (Sentinel's default): Floodgate's shared count is a one-second sliding window it does not size per rule, got 5",
      },
    ],
    [
      'a cluster THREAD-grade rule, as Floodgate validates it, at clusterMode',
      { resource: 'r', grade: 0, count: 1, clusterMode: true, clusterConfig: CLUSTER_CONFIG },
      { path: 'flow[0].clusterMode', message: "cluster mode applies to qps rules only, got metric 'concurrency'" },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('flow', rule)).toEqual([issue]);
  });

  it('writes every field as Sentinel does, its defaults included', () => {
    expect(toSentinelRules({ flow: [{ resource: 'r', threshold: 10 }] })).toEqual({
      flow: [
        {
          resource: 'r',
          limitApp: 'default',
          grade: 1,
          count: 10,
          strategy: 0,
          controlBehavior: 0,
          warmUpPeriodSec: 10,
          maxQueueingTimeMs: 500,
          clusterMode: false,
          regex: false,
        },
      ],
    });
  });

  it('writes a cluster rule with a full clusterConfig and a flowId', () => {
    const [written] = toSentinelRules({
      flow: [{ resource: 'r', threshold: 10, cluster: { thresholdType: 'perInstance', fallbackToLocal: false } }],
    }).flow!;
    expect(written).toMatchObject({
      clusterMode: true,
      clusterConfig: {
        flowId: expect.any(Number),
        thresholdType: 0,
        fallbackToLocalWhenFail: false,
        strategy: 0,
        sampleCount: 10,
        windowIntervalMs: 1000,
        resourceTimeout: 2000,
        resourceTimeoutStrategy: 0,
        acquireRefuseStrategy: 0,
        clientOfflineTime: 2000,
      },
    });
    expect(Number.isSafeInteger((written!.clusterConfig as { flowId: number }).flowId)).toBe(true);
  });

  it('gives every writer of the same cluster rule the same flowId, and two rules two', () => {
    const rules = {
      flow: [
        { resource: 'a', threshold: 10, cluster: {} },
        { resource: 'b', threshold: 10, cluster: {} },
      ],
    };
    const ids = (written: ReturnType<typeof toSentinelRules>) =>
      written.flow!.map((rule) => (rule.clusterConfig as { flowId: number }).flowId);
    expect(ids(toSentinelRules(rules))).toEqual(ids(toSentinelRules(rules)));
    expect(new Set(ids(toSentinelRules(rules))).size).toBe(2);
  });

  it.each([
    [
      'adaptive concurrency',
      { resource: 'r', metric: 'concurrency', behavior: 'adaptive', threshold: 10 },
      { path: 'flow[0].behavior', message: "'adaptive' has no Sentinel equivalent" },
    ],
    [
      'a concurrency rule with a queue',
      { resource: 'r', metric: 'concurrency', threshold: 10, maxQueueLength: 5 },
      { path: 'flow[0].maxQueueLength', message: expect.stringContaining('has no Sentinel equivalent') },
    ],
    [
      'a cold factor other than 3',
      { resource: 'r', threshold: 10, behavior: 'warmUp', warmUpPeriodMs: 1000, coldFactor: 4 },
      {
        path: 'flow[0].coldFactor',
        message: "must be 3: Sentinel's cold factor is one per process (csp.sentinel.flow.cold.factor), got 4",
      },
    ],
    [
      'a warm-up that is not whole seconds',
      { resource: 'r', threshold: 10, behavior: 'warmUp', warmUpPeriodMs: 1500 },
      { path: 'flow[0].warmUpPeriodMs', message: "must be whole seconds for Sentinel's warmUpPeriodSec, got 1500" },
    ],
    [
      'a throttle without a queue',
      { resource: 'r', threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 0 },
      {
        path: 'flow[0].maxQueueingTimeMs',
        message: 'must be > 0: Sentinel ignores a rate limiter rule with a 0 ms queue as invalid',
      },
    ],
    [
      'a queue of a fraction of a ms',
      { resource: 'r', threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 2.5 },
      { path: 'flow[0].maxQueueingTimeMs', message: 'must be an integer for Sentinel (its field is an int), got 2.5' },
    ],
    [
      'leased cluster tokens',
      { resource: 'r', threshold: 10, cluster: { leaseTokens: 5 } },
      { path: 'flow[0].cluster.leaseTokens', message: 'has no Sentinel equivalent, got 5' },
    ],
  ] as const)('cannot write %s', (_, rule, issue) => {
    expect(writeIssues({ flow: [rule] })).toEqual([issue]);
  });
});

describe('Sentinel (Java) degrade rules', () => {
  const BREAKER = { resource: 'r', minRequestAmount: 5, statIntervalMs: 1000 };

  it.each([
    [
      "grade 0 (RT, Sentinel's default) as slowRequestRatio: count is the slowest call in ms, slowRatioThreshold the ratio",
      { resource: 'r', count: 200, slowRatioThreshold: 0.4, timeWindow: 10, minRequestAmount: 5, statIntervalMs: 1000 },
      { ...BREAKER, strategy: 'slowRequestRatio', threshold: 0.4, maxAllowedRtMs: 200, retryTimeoutMs: 10_000 },
    ],
    [
      "the slow ratio at Sentinel's default (1.0)",
      { resource: 'r', grade: 0, count: 200, timeWindow: 1 },
      { resource: 'r', strategy: 'slowRequestRatio', threshold: 1, maxAllowedRtMs: 200, retryTimeoutMs: 1000 },
    ],
    [
      'grade 1 (EXCEPTION_RATIO) as errorRatio, slowRatioThreshold unread',
      { resource: 'r', grade: 1, count: 0.5, slowRatioThreshold: 7, timeWindow: 30, statIntervalMs: 5000 },
      { resource: 'r', strategy: 'errorRatio', threshold: 0.5, statIntervalMs: 5000, retryTimeoutMs: 30_000 },
    ],
    [
      'grade 2 (EXCEPTION_COUNT) as errorCount',
      { resource: 'r', grade: 2, count: 20, timeWindow: 60, minRequestAmount: 10 },
      { resource: 'r', strategy: 'errorCount', threshold: 20, minRequestAmount: 10, retryTimeoutMs: 60_000 },
    ],
    [
      "the runtime counter Sentinel's older versions wrote (passCount)",
      { resource: 'r', grade: 2, count: 20, timeWindow: 60, passCount: 0, limitApp: 'default' },
      { resource: 'r', strategy: 'errorCount', threshold: 20, retryTimeoutMs: 60_000 },
    ],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('degrade', rule, 'circuitBreakers')).toEqual(expected);
  });

  it.each([
    [
      'a rule without timeWindow',
      { resource: 'r', grade: 2, count: 1 },
      { path: 'degrade[0].timeWindow', message: 'is required (a safe integer within [1, 2147483])' },
    ],
    [
      'a timeWindow of 0 s',
      { resource: 'r', grade: 2, count: 1, timeWindow: 0 },
      { path: 'degrade[0].timeWindow', message: 'must be a safe integer within [1, 2147483], got 0' },
    ],
    [
      'a limitApp, which Sentinel does not apply to degrade rules',
      { resource: 'r', grade: 2, count: 1, timeWindow: 1, limitApp: 'partner' },
      {
        path: 'degrade[0].limitApp',
        message:
          'must be "default" (or absent): Sentinel applies a degrade rule to every caller whatever its limitApp, got "partner"',
      },
    ],
    [
      'an exception ratio over 1, at count',
      { resource: 'r', grade: 1, count: 1.5, timeWindow: 1 },
      { path: 'degrade[0].count', message: 'must be a finite number within [0, 1], got 1.5' },
    ],
    [
      'a slow ratio over 1, at slowRatioThreshold',
      { resource: 'r', grade: 0, count: 100, slowRatioThreshold: 1.5, timeWindow: 1 },
      { path: 'degrade[0].slowRatioThreshold', message: 'must be a finite number within [0, 1], got 1.5' },
    ],
    [
      'a minRequestAmount of 0, which Sentinel ignores as invalid',
      { resource: 'r', grade: 2, count: 1, timeWindow: 1, minRequestAmount: 0 },
      { path: 'degrade[0].minRequestAmount', message: 'must be a safe integer >= 1, got 0' },
    ],
    [
      'an unknown grade',
      { resource: 'r', grade: 3, count: 1, timeWindow: 1 },
      { path: 'degrade[0].grade', message: 'must be one of 0 (RT), 1 (EXCEPTION_RATIO), 2 (EXCEPTION_COUNT), got 3' },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('degrade', rule)).toEqual([issue]);
  });

  it('writes every field as Sentinel does', () => {
    expect(
      toSentinelRules({
        circuitBreakers: [
          { resource: 'r', strategy: 'slowRequestRatio', threshold: 0.4, maxAllowedRtMs: 200, retryTimeoutMs: 10_000 },
          { resource: 's', strategy: 'errorCount', threshold: 3, retryTimeoutMs: 2000, statIntervalMs: 30_000 },
        ],
      }).degrade,
    ).toEqual([
      {
        resource: 'r',
        limitApp: 'default',
        grade: 0,
        count: 200,
        timeWindow: 10,
        minRequestAmount: 5,
        slowRatioThreshold: 0.4,
        statIntervalMs: 1000,
        regex: false,
      },
      {
        resource: 's',
        limitApp: 'default',
        grade: 2,
        count: 3,
        timeWindow: 2,
        minRequestAmount: 5,
        slowRatioThreshold: 1,
        statIntervalMs: 30_000,
        regex: false,
      },
    ]);
  });

  it.each([
    [
      'a window of several buckets',
      { bucketCount: 2 },
      { path: 'circuitBreakers[0].bucketCount', message: "must be 1: Sentinel's breakers count in one bucket, got 2" },
    ],
    [
      'several half-open probes',
      { halfOpenProbes: 3 },
      {
        path: 'circuitBreakers[0].halfOpenProbes',
        message: "must be 1: Sentinel's breakers probe with one call, got 3",
      },
    ],
    [
      'a shared breaker',
      { cluster: true },
      { path: 'circuitBreakers[0].cluster', message: 'has no Sentinel equivalent (Sentinel shares no breakers)' },
    ],
    [
      'a retry timeout that is not whole seconds',
      { retryTimeoutMs: 1500 },
      {
        path: 'circuitBreakers[0].retryTimeoutMs',
        message: "must be whole seconds for Sentinel's timeWindow, got 1500",
      },
    ],
  ] as const)('cannot write %s', (_, fields, issue) => {
    const rule = { resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000, ...fields } as const;
    expect(writeIssues({ circuitBreakers: [rule] })).toEqual([issue]);
  });
});

describe('Sentinel (Java) param-flow rules', () => {
  const HOT = { resource: 'r', paramIndex: 0, metric: 'qps', behavior: 'reject', durationMs: 1000, specificItems: {} };
  const item = (object: string, classType?: string) => ({
    resource: 'r',
    paramIdx: 0,
    count: 5,
    paramFlowItemList: [{ object, count: 1, ...(classType === undefined ? {} : { classType }) }],
  });

  it.each([
    ['a QPS rule with its defaults', { resource: 'r', paramIdx: 0, count: 5 }, { ...HOT, threshold: 5 }],
    [
      'paramIdx counting from the end, durationInSec in ms, and the burst',
      { resource: 'r', paramIdx: -1, count: 5, durationInSec: 60, burstCount: 2 },
      { ...HOT, paramIndex: -1, threshold: 5, durationMs: 60_000, burstCount: 2 },
    ],
    [
      'controlBehavior 2 (RATE_LIMITER) as throttle',
      { resource: 'r', paramIdx: 0, count: 5, controlBehavior: 2, maxQueueingTimeMs: 100 },
      { ...HOT, threshold: 5, behavior: 'throttle', maxQueueingTimeMs: 100 },
    ],
    [
      'a THREAD-grade rule as concurrency',
      { resource: 'r', paramIdx: 0, count: 5, grade: 0 },
      { ...HOT, threshold: 5, metric: 'concurrency' },
    ],
    [
      'cluster mode, without falling back by default (ParamFlowClusterConfig)',
      { resource: 'r', paramIdx: 0, count: 5, clusterMode: true, clusterConfig: { flowId: 9, thresholdType: 1 } },
      { ...HOT, threshold: 5, cluster: { thresholdType: 'global', fallbackToLocal: false } },
    ],
    [
      "a dashboard entity's wrapped rule",
      { id: 4, app: 'shop', ip: '10.0.0.1', port: 8720, gmtCreate: 1, rule: { resource: 'r', paramIdx: 0, count: 5 } },
      { ...HOT, threshold: 5 },
    ],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('param-flow', rule, 'hotParams')).toEqual(expected);
  });

  it.each([
    ['an int, in its canonical form', '007', 'int', '7'],
    ['a java.lang.Integer', '-12', 'java.lang.Integer', '-12'],
    ['a long beyond 2^53', '9223372036854775807', 'long', '9223372036854775807'],
    ['a short', '300', 'short', '300'],
    ['a byte', '-128', 'byte', '-128'],
    ['a double, in its canonical form', '1.50', 'double', '1.5'],
    ['a float with its suffix', '2.5f', 'float', '2.5'],
    ['a double in exponent form', '1e3', 'java.lang.Double', '1000'],
    ['a boolean in any letter case', 'TRUE', 'boolean', 'true'],
    ['a char', 'x', 'char', 'x'],
    ['a String as it is', '007', 'java.lang.String', '007'],
    ['a value without classType, as a String', ' a b ', undefined, ' a b '],
  ])('keys an item of %s by its string form', (_, object, classType, key) => {
    expect(readOne('param-flow', item(object, classType), 'hotParams')).toMatchObject({ specificItems: { [key]: 1 } });
  });

  it.each([
    [
      'an int that is not one',
      'abc',
      'int',
      'must be an integer within [-2147483648, 2147483647] (classType "int"), got "abc"',
    ],
    [
      'an int beyond 2^31',
      '2147483648',
      'int',
      'must be an integer within [-2147483648, 2147483647] (classType "int"), got "2147483648"',
    ],
    ['a byte beyond 127', '128', 'byte', 'must be an integer within [-128, 127] (classType "byte"), got "128"'],
    ['a double that is not finite', 'NaN', 'double', 'must be a finite double (classType "double"), got "NaN"'],
    [
      'a boolean that is neither word',
      'yes',
      'boolean',
      'must be "true" or "false" (classType "boolean"; Sentinel reads anything else as false), got "yes"',
    ],
    ['a char of two characters', 'ab', 'char', 'must be one character (classType "char"), got "ab"'],
  ])('refuses an item of %s', (_, object, classType, message) => {
    expect(readIssues('param-flow', item(object, classType))).toEqual([
      { path: 'param-flow[0].paramFlowItemList[0].object', message },
    ]);
  });

  it('refuses a classType Sentinel does not parse', () => {
    expect(readIssues('param-flow', item('u1', 'com.shop.UserId'))).toEqual([
      {
        path: 'param-flow[0].paramFlowItemList[0].classType',
        message: expect.stringContaining(
          '(Sentinel parses only these; any other type\'s arguments never equal the String it reads), got "com.shop.UserId"',
        ),
      },
    ]);
  });

  it('refuses two items that are one value to Floodgate', () => {
    const rule = {
      resource: 'r',
      paramIdx: 0,
      count: 5,
      paramFlowItemList: [
        { object: '7', classType: 'int', count: 1 },
        { object: '07', classType: 'long', count: 2 },
      ],
    };
    expect(readIssues('param-flow', rule)).toEqual([
      {
        path: 'param-flow[0].paramFlowItemList[1].object',
        message:
          '"07" is the same value as param-flow[0].paramFlowItemList[0] to Floodgate, which compares parameter values by their string form ("7")',
      },
    ]);
  });

  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses an item of value %s, a key Floodgate refuses',
    (object) => {
      expect(readIssues('param-flow', item(object, 'java.lang.String'))).toEqual([
        {
          path: 'param-flow[0].paramFlowItemList[0].object',
          message: `cannot be "${object}": Floodgate refuses it as a key anywhere in a rule set (__proto__, constructor, prototype)`,
        },
      ]);
    },
  );

  it.each([
    [
      'warm-up, which hotspot rules lack',
      { controlBehavior: 1 },
      {
        path: 'param-flow[0].controlBehavior',
        message:
          "1 (WARM_UP) is not supported: Sentinel's hotspot rules do not warm up (they act as 0, DEFAULT); write 0 or 2",
      },
    ],
    [
      'a rate limiter on a THREAD-grade rule',
      { grade: 0, controlBehavior: 2 },
      {
        path: 'param-flow[0].controlBehavior',
        message: 'must be 0 (DEFAULT) for a THREAD-grade rule: Sentinel ignores it there (it rejects over the count)',
      },
    ],
    [
      'a count Sentinel would truncate',
      { count: 2.5 },
      {
        path: 'param-flow[0].count',
        message: 'must be a whole number: Sentinel truncates a hotspot count (to 2), got 2.5',
      },
    ],
    [
      'a rule without paramIdx',
      { paramIdx: undefined },
      { path: 'param-flow[0].paramIdx', message: 'is required (an integer)' },
    ],
    [
      'an item with a negative count',
      { paramFlowItemList: [{ object: 'a', count: -1 }] },
      {
        path: 'param-flow[0].paramFlowItemList[0].count',
        message: 'must be a safe integer within [0, 2147483647], got -1',
      },
    ],
    [
      'a duration of 0 s',
      { durationInSec: 0 },
      { path: 'param-flow[0].durationInSec', message: 'must be a safe integer within [1, 9007199254740], got 0' },
    ],
  ])('refuses %s', (_, fields, issue) => {
    const rule = JSON.parse(JSON.stringify({ resource: 'r', paramIdx: 0, count: 5, ...fields })) as unknown;
    expect(readIssues('param-flow', rule)).toEqual([issue]);
  });

  it('refuses fields beside a wrapped rule that a dashboard entity has not', () => {
    expect(
      readIssues('param-flow', { app: 'shop', owner: 'x', rule: { resource: 'r', paramIdx: 0, count: 5 } }),
    ).toEqual([{ path: 'param-flow[0].owner', message: expect.stringMatching(/^unknown field \(allowed: id, app, /) }]);
  });

  it('writes every field as Sentinel does, each item with the classType its value looks like', () => {
    expect(
      toSentinelRules({
        hotParams: [
          {
            resource: 'r',
            paramIndex: 1,
            threshold: 5,
            durationMs: 2000,
            specificItems: { 7: 1, '9007199254740993': 2, true: 3, '1.5': 4, vip: 5 },
          },
        ],
      })['param-flow'],
    ).toEqual([
      {
        resource: 'r',
        limitApp: 'default',
        grade: 1,
        paramIdx: 1,
        count: 5,
        controlBehavior: 0,
        maxQueueingTimeMs: 0,
        burstCount: 0,
        durationInSec: 2,
        paramFlowItemList: [
          { object: '7', count: 1, classType: 'int' },
          { object: '1.5', count: 4, classType: 'double' },
          { object: '9007199254740993', count: 2, classType: 'long' },
          { object: 'true', count: 3, classType: 'boolean' },
          { object: 'vip', count: 5, classType: 'java.lang.String' },
        ],
        clusterMode: false,
        regex: false,
      },
    ]);
  });

  it.each([
    [
      'a parameter by key',
      { paramKey: 'userId', paramIndex: undefined },
      {
        path: 'hotParams[0].paramKey',
        message:
          'has no Sentinel equivalent: Sentinel\'s hotspot rules read arguments by position (paramIdx), got "userId"',
      },
    ],
    [
      'a duration that is not whole seconds',
      { durationMs: 1500 },
      { path: 'hotParams[0].durationMs', message: "must be whole seconds for Sentinel's durationInSec, got 1500" },
    ],
    [
      'a value cache of its own size',
      { capacity: 100 },
      {
        path: 'hotParams[0].capacity',
        message:
          'must be 4000: Sentinel sizes its value cache itself (min(4000 × durationInSec, 200000); 4000 for THREAD), got 100',
      },
    ],
  ] as const)('cannot write %s', (_, fields, issue) => {
    const rule = JSON.parse(JSON.stringify({ resource: 'r', paramIndex: 0, threshold: 5, ...fields })) as never;
    expect(writeIssues({ hotParams: [rule] })).toEqual([issue]);
  });
});

describe('Sentinel (Java) system rules', () => {
  it('reads each limit set (>= 0), a negative one as unset', () => {
    expect(
      fromSentinelRules({
        system: [
          { highestSystemLoad: -1, highestCpuUsage: 0.8, qps: -1, avgRt: -1, maxThread: -1 },
          { highestCpuUsage: -1, qps: 2000, avgRt: 200, maxThread: 500, regex: false },
        ],
      }).system,
    ).toEqual([{ maxCpuUsage: 0.8 }, { maxQps: 2000, maxAvgRtMs: 200, maxConcurrency: 500 }]);
  });

  it.each([
    [
      'a load limit, which has no meaning for a Node process',
      { highestSystemLoad: 4, qps: 10 },
      {
        path: 'system[0].highestSystemLoad',
        message:
          "is not supported: the host's load average says little about a Node process (use -1, and maxEventLoopDelayMs or maxEventLoopUtilization in a Floodgate rule), got 4",
      },
    ],
    [
      'a rule that sets no limit',
      { highestSystemLoad: -1, highestCpuUsage: -1, qps: -1, avgRt: -1, maxThread: -1 },
      {
        path: 'system[0]',
        message: 'sets no limit: every one of highestCpuUsage, qps, avgRt and maxThread is -1 or absent',
      },
    ],
    [
      'a resource, which system rules have not',
      { resource: 'r', qps: 10 },
      {
        path: 'system[0].resource',
        message: 'must be absent: Sentinel\'s system rules apply to every inbound call, got "r"',
      },
    ],
    [
      'a CPU usage over 1, at highestCpuUsage',
      { highestCpuUsage: 1.5 },
      { path: 'system[0].highestCpuUsage', message: 'must be a finite number within [0, 1], got 1.5' },
    ],
    [
      'a fractional avgRt (a long)',
      { avgRt: 1.5 },
      { path: 'system[0].avgRt', message: 'must be a safe integer, got 1.5' },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('system', rule)).toEqual([issue]);
  });

  it('writes each limit, -1 for the unset', () => {
    expect(toSentinelRules({ system: [{ maxQps: 100 }] }).system).toEqual([
      { highestSystemLoad: -1, highestCpuUsage: -1, qps: 100, avgRt: -1, maxThread: -1, regex: false },
    ]);
  });

  it.each([
    ['an event-loop limit', { maxEventLoopDelayMs: 50 }, 'system[0].maxEventLoopDelayMs', 'has no Sentinel equivalent'],
    ['a memory limit', { maxRssBytes: 1e9 }, 'system[0].maxRssBytes', 'has no Sentinel equivalent'],
    [
      'a retry hint of its own',
      { maxQps: 5, retryAfterMs: 5000 },
      'system[0].retryAfterMs',
      'must be 1000: Sentinel has no retry hint, got 5000',
    ],
    [
      'a fractional average response time',
      { maxAvgRtMs: 2.5 },
      'system[0].maxAvgRtMs',
      'must be an integer for Sentinel (its field is a long), got 2.5',
    ],
  ])('cannot write %s', (_, rule, path, message) => {
    expect(writeIssues({ system: [rule] })).toEqual([{ path, message }]);
  });
});

describe('Sentinel (Java) authority rules', () => {
  it.each([
    [
      'a white list of origins',
      { resource: 'r', limitApp: 'web,mobile' },
      { strategy: 'allow', origins: ['web', 'mobile'] },
    ],
    ['a black list', { resource: 'r', limitApp: 'bot', strategy: 1 }, { strategy: 'deny', origins: ['bot'] }],
    ['empty names between commas as no origin', { resource: 'r', limitApp: 'a,,b,' }, { origins: ['a', 'b'] }],
    ["a dashboard entity's wrapped rule", { id: 1, rule: { resource: 'r', limitApp: 'a' } }, { origins: ['a'] }],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('authority', rule, 'authority')).toMatchObject({ resource: 'r', ...expected });
  });

  it.each([
    [
      'a rule without origins',
      { resource: 'r', limitApp: ' ' },
      {
        path: 'authority[0].limitApp',
        message: 'is required: the origins, comma-separated (Sentinel ignores an authority rule without them), got " "',
      },
    ],
    [
      'an unknown strategy',
      { resource: 'r', limitApp: 'a', strategy: 2 },
      { path: 'authority[0].strategy', message: 'must be one of 0 (WHITE), 1 (BLACK), got 2' },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('authority', rule)).toEqual([issue]);
  });

  it('writes the origins as one comma-separated limitApp', () => {
    expect(
      toSentinelRules({ authority: [{ resource: 'r', strategy: 'deny', origins: ['a', 'b'] }] }).authority,
    ).toEqual([{ resource: 'r', limitApp: 'a,b', strategy: 1, regex: false }]);
  });

  it.each([
    [
      'an origin holding a comma',
      ['a,b'],
      { path: 'authority[0].origins[0]', message: 'cannot hold a comma in Sentinel\'s limitApp list, got "a,b"' },
    ],
    [
      'no origin',
      [],
      {
        path: 'authority[0].origins',
        message: 'must name an origin: Sentinel ignores an authority rule with an empty limitApp',
      },
    ],
  ])('cannot write %s', (_, origins, issue) => {
    expect(writeIssues({ authority: [{ resource: 'r', origins }] })).toEqual([issue]);
  });
});

describe('Sentinel (Java) types Floodgate does not take', () => {
  it.each([
    ['isolation', /^isolation rules are sentinel-golang's; Sentinel \(Java\) limits concurrency with flow rules/],
  ] as const)('refuses %s rules, saying why', (type, message) => {
    expect(readIssues(type, { resource: 'r' })).toEqual([{ path: type, message: expect.stringMatching(message) }]);
  });
});
