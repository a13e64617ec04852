import fc from 'fast-check';
import { Floodgate, RuleValidationError } from '@floodgate/core';
import {
  fromSentinelRules,
  toSentinelRules,
  type SentinelDialect,
  type SentinelRule,
  type SentinelRules,
} from '@floodgate/core/sentinel';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/**
 * Sentinel rules in the form Floodgate writes them (every field present, as Sentinel's file
 * data source and sentinel-golang write them): reading them, loading them into an engine and
 * writing what is in force gives them back, apart from what Floodgate does not keep (a new
 * cluster rule's flowId) and the order of hotspot items (a set).
 */
const RUNS = 200;

const resource = fc.constantFrom('a', 'b', 'GET /users/:id', 'POST /orders');
const int = (min: number, max: number) => fc.integer({ min, max });
/** A double within [min, max], never -0 (which JSON cannot tell from 0). */
const double = (min: number, max: number) => fc.double({ min, max, noNaN: true }).map((x) => x + 0);
/** A threshold: 0, or a rate a throttle can pace (Floodgate refuses below one call per 2^31 − 1 ms). */
const rate = fc.oneof(fc.constant(0), double(0.001, 1e6));
const list = <T>(rule: fc.Arbitrary<T>) => fc.array(rule, { maxLength: 4 });
const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/).filter((s) => s !== 'true' && s !== 'false');
const INT32 = 2n ** 31n;

// ---- Sentinel (Java) ----

const clusterConfig = (flow: boolean) =>
  fc.record({ flowId: int(1, 1e9), thresholdType: int(0, 1), fallbackToLocalWhenFail: fc.boolean() }).map((c) => ({
    ...c,
    ...(flow ? { strategy: 0 } : {}),
    sampleCount: 10,
    windowIntervalMs: 1000,
    ...(flow
      ? { resourceTimeout: 2000, resourceTimeoutStrategy: 0, acquireRefuseStrategy: 0, clientOfflineTime: 2000 }
      : {}),
  }));

const javaFlow = fc
  .record({
    resource,
    limitApp: fc.constantFrom('default', 'other', 'partner'),
    grade: int(0, 1),
    count: rate,
    relate: fc.option(resource, { nil: undefined }),
    controlBehavior: int(0, 3),
    warmUpPeriodSec: int(1, 3600),
    maxQueueingTimeMs: int(1, 10_000),
    cluster: fc.option(clusterConfig(true), { nil: undefined }),
  })
  .map((r) => {
    const behavior = r.grade === 0 ? 0 : r.controlBehavior;
    const clustered =
      r.cluster !== undefined && r.grade === 1 && r.relate === undefined && (behavior === 0 || behavior === 2);
    return {
      resource: r.resource,
      limitApp: r.limitApp,
      grade: r.grade,
      count: r.count,
      strategy: r.relate === undefined ? 0 : 1,
      ...(r.relate === undefined ? {} : { refResource: r.relate }),
      controlBehavior: behavior,
      warmUpPeriodSec: behavior === 1 || behavior === 3 ? r.warmUpPeriodSec : 10,
      maxQueueingTimeMs: behavior === 2 || behavior === 3 ? r.maxQueueingTimeMs : 500,
      clusterMode: clustered,
      ...(clustered ? { clusterConfig: r.cluster } : {}),
      regex: false,
    };
  });

const javaDegrade = fc
  .record({
    resource,
    grade: int(0, 2),
    count: double(0, 1e6),
    ratio: double(0, 1),
    timeWindow: int(1, 86_400),
    minRequestAmount: int(1, 1000),
    statIntervalMs: int(1, 600_000),
  })
  .map((r) => ({
    resource: r.resource,
    limitApp: 'default',
    grade: r.grade,
    count: r.grade === 1 ? r.ratio : r.count,
    timeWindow: r.timeWindow,
    minRequestAmount: r.minRequestAmount,
    slowRatioThreshold: r.grade === 0 ? r.ratio : 1,
    statIntervalMs: r.statIntervalMs,
    regex: false,
  }));

/** A hotspot item's value and the classType Floodgate writes for a value of that form. */
const javaItem = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => ({
    object: String(n),
    classType: n >= -INT32 && n < INT32 ? 'int' : 'long',
  })),
  word.map((object) => ({ object, classType: 'java.lang.String' })),
  fc.boolean().map((b) => ({ object: String(b), classType: 'boolean' })),
  double(-1e6, 1e6)
    .filter((x) => !Number.isInteger(x))
    .map((x) => ({ object: String(x), classType: 'double' })),
);

const javaParamFlow = fc
  .record({
    resource,
    grade: int(0, 1),
    paramIdx: int(-5, 5),
    count: int(0, 1e6),
    throttle: fc.boolean(),
    maxQueueingTimeMs: int(0, 10_000),
    burstCount: int(0, 1000),
    // Short: a hotspot rule's value cache is allocated when it loads (4000 values per second).
    durationInSec: int(1, 5),
    items: fc.uniqueArray(
      fc.record({ value: javaItem, count: int(0, 2 ** 31 - 1) }).map(({ value, count }) => ({ ...value, count })),
      { selector: (item) => item.object, maxLength: 5 },
    ),
    cluster: fc.option(clusterConfig(false), { nil: undefined }),
  })
  .map((r) => ({
    resource: r.resource,
    limitApp: 'default',
    grade: r.grade,
    paramIdx: r.paramIdx,
    count: r.count,
    controlBehavior: r.grade === 1 && r.throttle ? 2 : 0,
    maxQueueingTimeMs: r.maxQueueingTimeMs,
    burstCount: r.burstCount,
    durationInSec: r.durationInSec,
    paramFlowItemList: r.items.map(({ object, count, classType }) => ({ object, count, classType })),
    clusterMode: r.cluster !== undefined && r.grade === 1,
    ...(r.cluster !== undefined && r.grade === 1 ? { clusterConfig: r.cluster } : {}),
    regex: false,
  }));

const unset = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: -1 });
const javaSystem = fc
  .record({
    highestCpuUsage: unset(double(0, 1)),
    qps: unset(double(0, 1e6)),
    avgRt: unset(int(0, 1e6)),
    maxThread: unset(int(0, 1e6)),
  })
  .filter((r) => Object.values(r).some((v) => v !== -1))
  .map((r) => ({ highestSystemLoad: -1, ...r, regex: false }));

const javaAuthority = fc
  .record({
    resource,
    origins: fc.uniqueArray(fc.constantFrom('web', 'mobile', 'partner', 'bot'), { minLength: 1, maxLength: 3 }),
    strategy: int(0, 1),
  })
  .map((r) => ({ resource: r.resource, limitApp: r.origins.join(','), strategy: r.strategy, regex: false }));

const javaRules = fc.record({
  flow: list(javaFlow),
  degrade: list(javaDegrade),
  'param-flow': list(javaParamFlow),
  system: list(javaSystem),
  authority: list(javaAuthority),
});

// ---- sentinel-golang ----

const goFlow = fc
  .record({
    resource,
    warm: fc.boolean(),
    queued: fc.boolean(),
    threshold: rate,
    relate: fc.option(resource, { nil: undefined }),
    maxQueueingTimeMs: int(0, 10_000),
    warmUpPeriodSec: int(1, 3600),
    warmUpColdFactor: int(2, 10),
  })
  .map((r) => ({
    resource: r.resource,
    tokenCalculateStrategy: r.warm ? 1 : 0,
    controlBehavior: r.queued ? 1 : 0,
    threshold: r.threshold,
    relationStrategy: r.relate === undefined ? 0 : 1,
    refResource: r.relate ?? '',
    maxQueueingTimeMs: r.queued ? r.maxQueueingTimeMs : 0,
    warmUpPeriodSec: r.warm ? r.warmUpPeriodSec : 0,
    warmUpColdFactor: r.warm ? r.warmUpColdFactor : 0,
    statIntervalInMs: 0,
    lowMemUsageThreshold: 0,
    highMemUsageThreshold: 0,
    memLowWaterMarkBytes: 0,
    memHighWaterMarkBytes: 0,
    regex: false,
  }));

const goIsolation = fc
  .record({ resource, threshold: int(1, 2 ** 32 - 1) })
  .map((r) => ({ ...r, metricType: 0, regex: false }));

const goBreaker = fc
  .record({
    resource,
    strategy: int(0, 2),
    retryTimeoutMs: int(1, 1e6),
    minRequestAmount: int(1, 1000),
    buckets: int(1, 10),
    bucketMs: int(1, 10_000),
    maxAllowedRtMs: int(0, 1e5),
    ratio: double(0, 1),
    errors: int(1, 1e6),
  })
  .map((r) => ({
    resource: r.resource,
    strategy: r.strategy,
    retryTimeoutMs: r.retryTimeoutMs,
    minRequestAmount: r.minRequestAmount,
    statIntervalMs: r.buckets * r.bucketMs,
    statSlidingWindowBucketCount: r.buckets,
    maxAllowedRtMs: r.strategy === 0 ? r.maxAllowedRtMs : 0,
    threshold: r.strategy === 2 ? r.errors : r.ratio,
    probeNum: 0,
  }));

/** A hotspot item and the valKind Floodgate writes for a value of that form. */
const goItem = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => ({ valKind: 0, valStr: String(n) })),
  word.map((valStr) => ({ valKind: 1, valStr })),
  fc.boolean().map((b) => ({ valKind: 2, valStr: String(b) })),
  double(-1e6, 1e6)
    .map((x) => Number(x.toFixed(5)))
    .filter((x) => !Number.isInteger(x))
    .map((x) => ({ valKind: 3, valStr: String(x) })),
);

const goHotspot = fc
  .record({
    resource,
    qps: fc.boolean(),
    throttle: fc.boolean(),
    paramIndex: int(-5, 5),
    threshold: int(0, 1e6),
    maxQueueingTimeMs: int(0, 10_000),
    burstCount: int(0, 1000),
    // Short, and a small cache: a hotspot rule's value cache is allocated when it loads.
    durationInSec: int(1, 5),
    capacity: fc.option(int(1, 30_000), { nil: 0 }),
    items: fc.uniqueArray(
      fc.record({ value: goItem, threshold: int(0, 1e6) }).map(({ value, threshold }) => ({ ...value, threshold })),
      { selector: (item) => item.valStr, maxLength: 5 },
    ),
  })
  .map((r) => {
    const durationInSec = r.qps ? r.durationInSec : 0;
    const goDefault = r.qps ? Math.min(20_000, 4000 * durationInSec) : 4000;
    return {
      resource: r.resource,
      metricType: r.qps ? 1 : 0,
      controlBehavior: r.qps && r.throttle ? 1 : 0,
      paramIndex: r.paramIndex,
      threshold: r.threshold,
      maxQueueingTimeMs: r.maxQueueingTimeMs,
      burstCount: r.burstCount,
      durationInSec,
      // An explicit capacity equal to Go's default is written as its zero value.
      paramsMaxCapacity: r.capacity === goDefault ? 0 : r.capacity,
      specificItems: r.items,
    };
  });

const goSystem = fc.oneof(
  double(0, 1e6).map((triggerCount) => ({ metricType: 1, triggerCount, strategy: -1 })),
  int(0, 1e6).map((triggerCount) => ({ metricType: 2, triggerCount, strategy: -1 })),
  double(0, 1e6).map((triggerCount) => ({ metricType: 3, triggerCount, strategy: -1 })),
  double(0, 1).map((triggerCount) => ({ metricType: 4, triggerCount, strategy: 1 })),
);

const goRules = fc.record({
  flow: list(goFlow),
  isolation: list(goIsolation),
  degrade: list(goBreaker),
  'param-flow': list(goHotspot),
  system: list(goSystem),
});

// ---- the property ----

/** `rules` without what Floodgate does not keep: flowIds, and the order of hotspot items. */
function comparable(rules: SentinelRules): unknown {
  const items = (value: unknown) =>
    Array.isArray(value)
      ? [...(value as SentinelRule[])].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))
      : value;
  const strip = (rule: SentinelRule): SentinelRule => {
    const out: Record<string, unknown> = { ...rule };
    if (typeof out.clusterConfig === 'object') out.clusterConfig = { ...(out.clusterConfig as object), flowId: 0 };
    if ('paramFlowItemList' in out) out.paramFlowItemList = items(out.paramFlowItemList);
    if ('specificItems' in out) out.specificItems = items(out.specificItems);
    return out;
  };
  return Object.fromEntries(Object.entries(rules).map(([type, list]) => [type, (list ?? []).map(strip)]));
}

function roundTrip(rules: SentinelRules, dialect: SentinelDialect): SentinelRules {
  const fg = new Floodgate();
  fg.loadRules(fromSentinelRules(rules, { dialect }));
  return toSentinelRules(fg.getRules(), { dialect });
}

describe('property: Sentinel rules round-trip', () => {
  it(
    'Sentinel (Java) rules read, loaded into an engine and written back are the same rules',
    () => {
      fc.assert(
        fc.property(javaRules, (rules) => {
          expect(comparable(roundTrip(rules, 'java'))).toEqual(comparable(rules));
        }),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );

  it(
    'sentinel-golang rules read, loaded into an engine and written back are the same rules',
    () => {
      fc.assert(
        fc.property(goRules, (rules) => {
          expect(comparable(roundTrip(rules, 'go'))).toEqual(comparable(rules));
        }),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );

  it(
    'any JSON is either read as rules an engine loads, or refused with a RuleValidationError',
    () => {
      const field = fc.constantFrom(
        'resource',
        'count',
        'grade',
        'strategy',
        'controlBehavior',
        'limitApp',
        'paramIdx',
        'timeWindow',
        'clusterMode',
        'clusterConfig',
        'paramFlowItemList',
        'threshold',
        'metricType',
        'specificItems',
        '__proto__',
        'constructor',
      );
      const rule = fc.dictionary(field, fc.jsonValue(), { maxKeys: 6 });
      const type = fc.constantFrom('flow', 'degrade', 'param-flow', 'system', 'authority', 'isolation', 'gw-flow');
      fc.assert(
        fc.property(
          fc.dictionary(type, fc.array(rule, { maxLength: 3 })),
          fc.constantFrom('java', 'go'),
          (rules, dialect) => {
            let read;
            try {
              read = fromSentinelRules(rules as SentinelRules, { dialect: dialect as SentinelDialect });
            } catch (error) {
              expect(error).toBeInstanceOf(RuleValidationError);
              return;
            }
            new Floodgate().loadRules(read);
          },
        ),
        propertyRuns(RUNS * 2),
      );
    },
    propertyTimeoutMs(RUNS * 2),
  );
});
