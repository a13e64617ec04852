import type { RuleSetOptions } from '@floodgate/core/rules';
import { toSentinelRules } from '@floodgate/core/sentinel';
import { readIssues, readOne, writeIssues } from './helpers';

const go = { dialect: 'go' } as const;

describe('sentinel-golang flow and isolation rules', () => {
  const FLOW = { resource: 'r', threshold: 10, behavior: 'reject', strategy: 'direct' };

  it.each([
    ['a rule with its zero values', { resource: 'r', threshold: 10 }, FLOW],
    [
      'WarmUp as warmUp, the zero cold factor as 3',
      { resource: 'r', threshold: 10, tokenCalculateStrategy: 1, warmUpPeriodSec: 5, warmUpColdFactor: 0 },
      { ...FLOW, behavior: 'warmUp', warmUpPeriodMs: 5000, coldFactor: 3 },
    ],
    [
      'WarmUp with a cold factor of its own',
      { resource: 'r', threshold: 10, tokenCalculateStrategy: 1, warmUpPeriodSec: 5, warmUpColdFactor: 4 },
      { ...FLOW, behavior: 'warmUp', warmUpPeriodMs: 5000, coldFactor: 4 },
    ],
    [
      'Throttling as throttle, with no queue by default (its zero value)',
      { resource: 'r', threshold: 10, controlBehavior: 1 },
      { ...FLOW, behavior: 'throttle', maxQueueingTimeMs: 0 },
    ],
    [
      'WarmUp with Throttling as warmUpThrottle',
      {
        resource: 'r',
        threshold: 10,
        tokenCalculateStrategy: 1,
        controlBehavior: 1,
        warmUpPeriodSec: 2,
        maxQueueingTimeMs: 100,
      },
      { ...FLOW, behavior: 'warmUpThrottle', warmUpPeriodMs: 2000, coldFactor: 3, maxQueueingTimeMs: 100 },
    ],
    [
      'AssociatedResource as relate',
      { resource: 'r', threshold: 10, relationStrategy: 1, refResource: 'writes' },
      { ...FLOW, strategy: 'relate', refResource: 'writes' },
    ],
    [
      'a one-second statIntervalInMs, and fields sentinel-golang ignores where they stand',
      {
        resource: 'r',
        threshold: 10,
        statIntervalInMs: 1000,
        refResource: 'x',
        warmUpPeriodSec: 9,
        memLowWaterMarkBytes: 5,
      },
      FLOW,
    ],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('flow', rule, 'flow', 'go')).toEqual(expected);
  });

  it('reads an isolation rule as a concurrency flow rule', () => {
    expect(readOne('isolation', { resource: 'r', metricType: 0, threshold: 5, regex: false }, 'flow', 'go')).toEqual({
      resource: 'r',
      metric: 'concurrency',
      threshold: 5,
    });
  });

  it.each([
    [
      'MemoryAdaptive',
      { resource: 'r', threshold: 10, tokenCalculateStrategy: 2 },
      {
        path: 'flow[0].tokenCalculateStrategy',
        message:
          "2 (MemoryAdaptive) is not supported: it follows the process's memory use, and Floodgate's flow rules have no memory-adaptive threshold",
      },
    ],
    [
      'a statistic interval other than one second',
      { resource: 'r', threshold: 10, statIntervalInMs: 2000 },
      {
        path: 'flow[0].statIntervalInMs',
        message: "must be 0 or 1000: Floodgate's flow rules count over one second, got 2000",
      },
    ],
    [
      'WarmUp without warmUpPeriodSec (its zero value is refused)',
      { resource: 'r', threshold: 10, tokenCalculateStrategy: 1 },
      { path: 'flow[0].warmUpPeriodSec', message: 'is required (a safe integer within [1, 2147483])' },
    ],
    [
      'a cold factor of 1, as Floodgate validates it, at warmUpColdFactor',
      { resource: 'r', threshold: 10, tokenCalculateStrategy: 1, warmUpPeriodSec: 1, warmUpColdFactor: 1 },
      { path: 'flow[0].warmUpColdFactor', message: 'must be a finite number > 1, got 1' },
    ],
    [
      'AssociatedResource without refResource',
      { resource: 'r', threshold: 10, relationStrategy: 1, refResource: '' },
      {
        path: 'flow[0].refResource',
        message: 'is required when relationStrategy is 1 (AssociatedResource), got ""',
      },
    ],
    [
      'a regex resource',
      { resource: 'GET .*', threshold: 10, regex: true },
      {
        path: 'flow[0].regex',
        message:
          'true is not supported: a Floodgate rule names one resource exactly (regex resources are not supported)',
      },
    ],
    [
      "Java's field names",
      { resource: 'r', count: 10, threshold: 10 },
      { path: 'flow[0].count', message: expect.stringMatching(/^unknown field \(allowed: id, resource, /) },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('flow', rule, 'go')).toEqual([issue]);
  });

  it.each([
    [
      'a threshold of 0, which sentinel-golang refuses',
      { resource: 'r', threshold: 0 },
      { path: 'isolation[0].threshold', message: 'must be a safe integer within [1, 4294967295], got 0' },
    ],
    [
      'another metric type',
      { resource: 'r', metricType: 1, threshold: 1 },
      { path: 'isolation[0].metricType', message: 'must be one of 0 (Concurrency), got 1' },
    ],
  ])('refuses an isolation rule with %s', (_, rule, issue) => {
    expect(readIssues('isolation', rule, 'go')).toEqual([issue]);
  });

  it('writes QPS rules as flow rules and concurrency rules as isolation rules, every field as Go does', () => {
    expect(
      toSentinelRules(
        {
          flow: [
            { resource: 'a', threshold: 10, behavior: 'warmUpThrottle', warmUpPeriodMs: 3000, maxQueueingTimeMs: 20 },
            { resource: 'b', metric: 'concurrency', threshold: 4 },
          ],
        },
        go,
      ),
    ).toEqual({
      flow: [
        {
          resource: 'a',
          tokenCalculateStrategy: 1,
          controlBehavior: 1,
          threshold: 10,
          relationStrategy: 0,
          refResource: '',
          maxQueueingTimeMs: 20,
          warmUpPeriodSec: 3,
          warmUpColdFactor: 3,
          statIntervalInMs: 0,
          lowMemUsageThreshold: 0,
          highMemUsageThreshold: 0,
          memLowWaterMarkBytes: 0,
          memHighWaterMarkBytes: 0,
          regex: false,
        },
      ],
      isolation: [{ resource: 'b', metricType: 0, threshold: 4, regex: false }],
    });
  });

  it('writes an empty flow kind as empty flow and isolation lists', () => {
    expect(toSentinelRules({ flow: [] }, go)).toEqual({ flow: [], isolation: [] });
  });

  it.each([
    [
      'a rule for one origin',
      { resource: 'r', threshold: 1, limitOrigin: 'partner' },
      { path: 'flow[0].limitOrigin', message: 'has no sentinel-golang equivalent (sentinel-golang has no origins)' },
    ],
    [
      'a cluster rule',
      { resource: 'r', threshold: 1, cluster: {} },
      { path: 'flow[0].cluster', message: 'has no sentinel-golang equivalent (sentinel-golang has no cluster mode)' },
    ],
    [
      'a fractional cold factor',
      { resource: 'r', threshold: 1, behavior: 'warmUp', warmUpPeriodMs: 1000, coldFactor: 2.5 },
      { path: 'flow[0].coldFactor', message: 'must be an integer for Sentinel (its field is a uint32), got 2.5' },
    ],
    [
      'adaptive concurrency',
      { resource: 'r', metric: 'concurrency', behavior: 'adaptive', threshold: 10 },
      { path: 'flow[0].behavior', message: "'adaptive' has no sentinel-golang equivalent" },
    ],
    [
      'a concurrency rule with a queue',
      { resource: 'r', metric: 'concurrency', threshold: 10, maxQueueLength: 5 },
      { path: 'flow[0].maxQueueLength', message: expect.stringContaining('has no sentinel-golang equivalent') },
    ],
    [
      'a fractional concurrency limit',
      { resource: 'r', metric: 'concurrency', threshold: 2.5 },
      {
        path: 'flow[0].threshold',
        message: "must be a whole number within [1, 4294967295] for sentinel-golang's isolation threshold, got 2.5",
      },
    ],
  ] as const)('cannot write %s', (_, rule, issue) => {
    expect(writeIssues({ flow: [rule] as RuleSetOptions['flow'] }, 'go')).toEqual([issue]);
  });
});

describe('sentinel-golang circuit breaker rules', () => {
  const BREAKER = { resource: 'r', retryTimeoutMs: 3000, statIntervalMs: 5000 };

  it.each([
    [
      'SlowRequestRatio, with the zero-value amounts as one call and one bucket',
      { ...BREAKER, strategy: 0, maxAllowedRtMs: 50, threshold: 0.5, minRequestAmount: 0, probeNum: 0 },
      {
        ...BREAKER,
        strategy: 'slowRequestRatio',
        threshold: 0.5,
        maxAllowedRtMs: 50,
        minRequestAmount: 1,
        bucketCount: 1,
      },
    ],
    [
      'ErrorRatio with its sliding window, maxAllowedRtMs unread',
      {
        ...BREAKER,
        strategy: 1,
        threshold: 0.2,
        minRequestAmount: 20,
        statSlidingWindowBucketCount: 5,
        maxAllowedRtMs: 9,
      },
      { ...BREAKER, strategy: 'errorRatio', threshold: 0.2, minRequestAmount: 20, bucketCount: 5 },
    ],
    [
      'ErrorCount opening at errors >= threshold as Floodgate opening at errors > threshold - 1',
      { ...BREAKER, strategy: 2, threshold: 30, minRequestAmount: 30 },
      { ...BREAKER, strategy: 'errorCount', threshold: 29, minRequestAmount: 30, bucketCount: 1 },
    ],
    [
      'a fractional ErrorCount threshold as Go truncates it',
      { ...BREAKER, strategy: 2, threshold: 3.7, minRequestAmount: 1 },
      { ...BREAKER, strategy: 'errorCount', threshold: 2, minRequestAmount: 1, bucketCount: 1 },
    ],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('degrade', rule, 'circuitBreakers', 'go')).toEqual(expected);
  });

  it.each([
    [
      'several probes, which Go lets every call through for',
      { ...BREAKER, strategy: 1, threshold: 0.5, probeNum: 3 },
      {
        path: 'degrade[0].probeNum',
        message:
          'must be 0 (one probe): sentinel-golang lets every call through while half-open until probeNum calls succeed, where Floodgate lets its probes through and refuses the rest, got 3',
      },
    ],
    [
      'an ErrorCount threshold below 1, which opens with no error',
      { ...BREAKER, strategy: 2, threshold: 0.5 },
      {
        path: 'degrade[0].threshold',
        message:
          'must be >= 1: sentinel-golang opens when errors >= threshold, so below 1 it opens with no error at all, got 0.5',
      },
    ],
    [
      'a rule without statIntervalMs',
      { resource: 'r', retryTimeoutMs: 3000, strategy: 1, threshold: 0.5 },
      { path: 'degrade[0].statIntervalMs', message: 'is required (sentinel-golang refuses a rule without it)' },
    ],
    [
      'a bucket count that does not divide the interval (Go would use 1)',
      { ...BREAKER, strategy: 1, threshold: 0.5, statSlidingWindowBucketCount: 3 },
      {
        path: 'degrade[0].statIntervalMs',
        message: 'must split into bucketCount (3) buckets of whole milliseconds, got 5000',
      },
    ],
    [
      'a rule without retryTimeoutMs',
      { resource: 'r', statIntervalMs: 1000, strategy: 1, threshold: 0.5 },
      { path: 'degrade[0].retryTimeoutMs', message: 'is required (a finite number > 0 and <= 2147483647)' },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('degrade', rule, 'go')).toEqual([issue]);
  });

  it('writes every field as Go does, an error count as Go counts it', () => {
    expect(
      toSentinelRules(
        { circuitBreakers: [{ resource: 'r', strategy: 'errorCount', threshold: 29, retryTimeoutMs: 3000 }] },
        go,
      ).degrade,
    ).toEqual([
      {
        resource: 'r',
        strategy: 2,
        retryTimeoutMs: 3000,
        minRequestAmount: 5,
        statIntervalMs: 1000,
        statSlidingWindowBucketCount: 1,
        maxAllowedRtMs: 0,
        threshold: 30,
        probeNum: 0,
      },
    ]);
  });

  it('cannot write several half-open probes', () => {
    expect(
      writeIssues(
        {
          circuitBreakers: [
            { resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000, halfOpenProbes: 2 },
          ],
        },
        'go',
      ),
    ).toEqual([
      {
        path: 'circuitBreakers[0].halfOpenProbes',
        message: "must be 1: sentinel-golang's probeNum lets every call through while half-open, got 2",
      },
    ]);
  });
});

describe('sentinel-golang hotspot rules', () => {
  const HOT = { resource: 'r', paramIndex: 0, behavior: 'reject', specificItems: {} };

  it.each([
    [
      'a QPS rule, with the zero paramsMaxCapacity as Go sizes it',
      { resource: 'r', metricType: 1, threshold: 5, durationInSec: 10 },
      { ...HOT, metric: 'qps', threshold: 5, durationMs: 10_000, capacity: 20_000 },
    ],
    [
      'a rule with its zero values: a Concurrency rule',
      { resource: 'r', threshold: 5 },
      { ...HOT, metric: 'concurrency', threshold: 5, durationMs: 1000, capacity: 4000 },
    ],
    [
      'Throttling with its queue, and a capacity of its own',
      {
        resource: 'r',
        metricType: 1,
        controlBehavior: 1,
        threshold: 5,
        durationInSec: 1,
        maxQueueingTimeMs: 5,
        paramsMaxCapacity: 99,
      },
      {
        ...HOT,
        metric: 'qps',
        behavior: 'throttle',
        threshold: 5,
        durationMs: 1000,
        maxQueueingTimeMs: 5,
        capacity: 99,
      },
    ],
  ])('reads %s', (_, rule, expected) => {
    expect(readOne('param-flow', rule, 'hotParams', 'go')).toEqual(expected);
  });

  it.each([
    ['KindInt, in its canonical form', 0, '+0042', '42'],
    ['KindString as it is', 1, '0042', '0042'],
    ['KindBool in each form Go parses', 2, 'T', 'true'],
    ['KindBool false', 2, '0', 'false'],
    ['KindFloat64, rounded to 5 decimals as Go keys it', 3, '1.234567', '1.23457'],
  ])('keys an item of %s by its string form', (_, valKind, valStr, key) => {
    const rule = {
      resource: 'r',
      metricType: 1,
      threshold: 5,
      durationInSec: 1,
      specificItems: [{ valKind, valStr, threshold: 1 }],
    };
    expect(readOne('param-flow', rule, 'hotParams', 'go')).toMatchObject({ specificItems: { [key]: 1 } });
  });

  it.each([
    [
      'an item of an unknown kind',
      [{ valKind: 4, valStr: 'x', threshold: 1 }],
      {
        path: 'param-flow[0].specificItems[0].valKind',
        message: 'must be one of 0 (KindInt), 1 (KindString), 2 (KindBool), 3 (KindFloat64), got 4',
      },
    ],
    [
      'a KindInt that is not one',
      [{ valKind: 0, valStr: '1.5', threshold: 1 }],
      { path: 'param-flow[0].specificItems[0].valStr', message: 'must be a KindInt value, got "1.5"' },
    ],
    [
      'a KindBool Go cannot parse',
      [{ valKind: 2, valStr: 'yes', threshold: 1 }],
      { path: 'param-flow[0].specificItems[0].valStr', message: 'must be a KindBool value, got "yes"' },
    ],
    [
      'two items that are one value to Floodgate',
      [
        { valKind: 0, valStr: '7', threshold: 1 },
        { valKind: 1, valStr: '7', threshold: 2 },
      ],
      {
        path: 'param-flow[0].specificItems[1].valStr',
        message:
          '"7" is the same value as param-flow[0].specificItems[0] to Floodgate, which compares parameter values by their string form ("7")',
      },
    ],
  ])('refuses %s', (_, specificItems, issue) => {
    const rule = { resource: 'r', metricType: 1, threshold: 5, durationInSec: 1, specificItems };
    expect(readIssues('param-flow', rule, 'go')).toEqual([issue]);
  });

  it.each([
    [
      'paramKey, which the data sources of sentinel-golang do not read',
      { resource: 'r', metricType: 1, threshold: 5, durationInSec: 1, paramKey: 'userId' },
      {
        path: 'param-flow[0].paramKey',
        message: 'is not read by sentinel-golang\'s data sources (their HotspotRule has paramIndex only), got "userId"',
      },
    ],
    [
      'a QPS rule without durationInSec (its zero value is refused)',
      { resource: 'r', metricType: 1, threshold: 5 },
      { path: 'param-flow[0].durationInSec', message: 'is required (a safe integer within [1, 9007199254740])' },
    ],
    [
      'Throttling on a Concurrency rule',
      { resource: 'r', metricType: 0, controlBehavior: 1, threshold: 5 },
      {
        path: 'param-flow[0].controlBehavior',
        message: 'must be 0 (Reject) for a Concurrency rule, got 1 (Throttling)',
      },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('param-flow', rule, 'go')).toEqual([issue]);
  });

  it('writes every field as the data sources of sentinel-golang read them, each item with the kind its value looks like', () => {
    expect(
      toSentinelRules(
        {
          hotParams: [
            {
              resource: 'r',
              paramIndex: 2,
              threshold: 5,
              durationMs: 2000,
              specificItems: { 7: 1, '1.5': 2, '1.123456': 3, false: 4, vip: 5 },
            },
          ],
        },
        go,
      )['param-flow'],
    ).toEqual([
      {
        resource: 'r',
        metricType: 1,
        controlBehavior: 0,
        paramIndex: 2,
        threshold: 5,
        maxQueueingTimeMs: 0,
        burstCount: 0,
        durationInSec: 2,
        paramsMaxCapacity: 0,
        specificItems: [
          { valKind: 0, valStr: '7', threshold: 1 },
          { valKind: 1, valStr: '1.123456', threshold: 3 },
          { valKind: 3, valStr: '1.5', threshold: 2 },
          { valKind: 2, valStr: 'false', threshold: 4 },
          { valKind: 1, valStr: 'vip', threshold: 5 },
        ],
      },
    ]);
  });
});

describe('sentinel-golang system rules', () => {
  it.each([
    [1, 'AvgRT', 200, { maxAvgRtMs: 200 }],
    [2, 'Concurrency', 500, { maxConcurrency: 500 }],
    [3, 'InboundQPS', 2000, { maxQps: 2000 }],
    [4, 'CpuUsage', 0.8, { maxCpuUsage: 0.8 }],
  ])('reads metricType %i (%s) as its limit', (metricType, _, triggerCount, expected) => {
    expect(readOne('system', { metricType, triggerCount, strategy: -1 }, 'system', 'go')).toEqual(expected);
  });

  it.each([
    [
      'the Load metric (also its zero value)',
      { triggerCount: 4 },
      {
        path: 'system[0].metricType',
        message:
          "0 (Load) is not supported: the host's load average says little about a Node process; use maxEventLoopDelayMs or maxEventLoopUtilization in a Floodgate rule",
      },
    ],
    [
      'a rule without triggerCount',
      { metricType: 3 },
      { path: 'system[0].triggerCount', message: 'is required (a number >= 0)' },
    ],
    [
      'an unknown strategy',
      { metricType: 3, triggerCount: 5, strategy: 2 },
      { path: 'system[0].strategy', message: 'must be one of -1 (NoAdaptive), 0 (unset), 1 (BBR), got 2' },
    ],
    [
      'a CPU usage over 1, as Floodgate validates it, at triggerCount',
      { metricType: 4, triggerCount: 2 },
      { path: 'system[0].triggerCount', message: 'must be a finite number within [0, 1], got 2' },
    ],
  ])('refuses %s', (_, rule, issue) => {
    expect(readIssues('system', rule, 'go')).toEqual([issue]);
  });

  it('writes one rule per limit, the CPU limit with the BBR strategy Floodgate applies', () => {
    expect(toSentinelRules({ system: [{ maxQps: 100, maxCpuUsage: 0.7 }] }, go).system).toEqual([
      { metricType: 3, triggerCount: 100, strategy: -1 },
      { metricType: 4, triggerCount: 0.7, strategy: 1 },
    ]);
  });

  it('cannot write a limit Go has not', () => {
    expect(writeIssues({ system: [{ maxHeapUsedBytes: 1e9 }] }, 'go')).toEqual([
      { path: 'system[0].maxHeapUsedBytes', message: 'has no sentinel-golang equivalent' },
    ]);
  });
});

describe('sentinel-golang types Floodgate does not take', () => {
  it('refuses authority rules, which Go has not', () => {
    expect(readIssues('authority', { resource: 'r', limitApp: 'a' }, 'go')).toEqual([
      { path: 'authority', message: 'sentinel-golang has no authority rules' },
    ]);
  });

  it('cannot write authority rules', () => {
    expect(writeIssues({ authority: [{ resource: 'r', origins: ['a'] }] }, 'go')).toEqual([
      { path: 'authority[0]', message: 'has no sentinel-golang equivalent (sentinel-golang has no authority rules)' },
    ]);
  });
});
