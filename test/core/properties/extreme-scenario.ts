import fc from 'fast-check';
import type {
  CircuitBreakerRuleOptions,
  FlowRuleOptions,
  HotParamRuleOptions,
  RuleSetOptions,
  SystemRuleOptions,
} from '@floodgate/core/rules';
import type { SystemSignals } from '@floodgate/core/testing';
import { MAX_DURATION_MS } from '../../../packages/core/src/kernel/rule-reader';
import { RESOURCES, VALUES, type CallOp, type CallValue, type Op, type Resource } from './scenario';

/**
 * Random scenarios for the extreme-numbers property (#24): rules of every kind and behaviour
 * whose numbers are drawn from the edges of what validation accepts (denormals, 5e-324,
 * 1e-310, fractions of a millisecond, 2^31 − 1, 2^53 − 1, 1e308) and a little beyond (2^53,
 * `Number.MAX_VALUE`, thresholds too small to pace), calls taking up to 2^53 − 1 tokens, and
 * clock advances from 5e-324 ms to `MAX_DURATION_MS`, against system signals at their extremes.
 * Each resource has at most one rule that can make a call wait (see `scenario.ts`).
 */
export interface ExtremeScenario {
  readonly cluster: false;
  readonly rules: RuleSetOptions;
  readonly signals: SystemSignals;
  readonly ops: readonly Op[];
}

const MIN_PACED = 1000 / MAX_DURATION_MS;

/** Mostly the first, sometimes the second: values validation accepts, and values it must refuse. */
function mostly<T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ weight: 40, arbitrary: valid }, { weight: 1, arbitrary: invalid });
}

/** A rate or a count of calls in flight (any finite number >= 0 up to 2^53 − 1). */
const rate = mostly(
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(0, 5e-324, 1e-310, 1e-306, 1e-300, 1e-7) },
    { weight: 8, arbitrary: fc.constantFrom(MIN_PACED, 0.5, 1, 2.9999999999999996, 3, 1000.25) },
    { weight: 2, arbitrary: fc.constantFrom(2 ** 31 - 1, 2 ** 52, 2 ** 53 - 1) },
  ),
  fc.constantFrom(2 ** 53, 1e308, Number.MAX_VALUE),
);
/** A count (an integer >= 0 up to 2^53 − 1). */
const count = mostly(fc.constantFrom(0, 1, 1, 2, 3, 2 ** 31 - 1, 2 ** 53 - 1), fc.constant(2 ** 53));
/** A duration within (0, MAX_DURATION_MS]. */
const duration = mostly(
  fc.constantFrom(5e-324, 1e-310, 0.001, 0.5, 1, 999.999, 1000, MAX_DURATION_MS),
  fc.constant(MAX_DURATION_MS + 1),
);
/** A queueing time within [0, MAX_DURATION_MS]. */
const queue = fc.constantFrom(0, 5e-324, 0.5, 500, MAX_DURATION_MS);
/** A hotspot rule's period: any finite number > 0 up to 2^53 − 1 (not a timer). */
const period = mostly(
  fc.constantFrom(5e-324, 1e-310, 0.001, 0.5, 1000, MAX_DURATION_MS, 2 ** 53 - 1),
  fc.constant(2 ** 53),
);
const origin = fc.constantFrom('default', 'default', 'o1', 'other');

/** A flow rule of any metric and behaviour; `queued` says whether it may make calls wait. */
function flowRule(resource: Resource, queued: boolean): fc.Arbitrary<FlowRuleOptions> {
  const qps = fc
    .record({
      threshold: rate,
      behavior: fc.constantFrom('reject' as const, 'warmUp' as const, 'throttle' as const, 'warmUpThrottle' as const),
      warmUpPeriodMs: duration,
      coldFactor: fc.constantFrom(1 + 2 ** -52, 1.5, 3, 1e15, 1e308),
      maxQueueingTimeMs: queue,
      limitOrigin: origin,
    })
    .map(({ warmUpPeriodMs, coldFactor, maxQueueingTimeMs, ...rule }): FlowRuleOptions => {
      const warm = rule.behavior === 'warmUp' || rule.behavior === 'warmUpThrottle';
      const paced = rule.behavior === 'throttle' || rule.behavior === 'warmUpThrottle';
      return {
        resource,
        ...rule,
        ...(warm ? { warmUpPeriodMs, coldFactor } : {}),
        ...(paced ? { maxQueueingTimeMs: queued ? maxQueueingTimeMs : 0 } : {}),
      };
    });
  const concurrency = fc.record({
    resource: fc.constant(resource),
    metric: fc.constant('concurrency' as const),
    threshold: rate,
    limitOrigin: origin,
  });
  const adaptive = fc
    .record({ minLimit: fc.constantFrom(1, 3, 2 ** 53 - 1), maxLimit: fc.constantFrom(1, 3, 1000, 2 ** 53 - 1) })
    .filter(({ minLimit, maxLimit }) => minLimit <= maxLimit)
    .chain(({ minLimit, maxLimit }) =>
      fc.record({
        resource: fc.constant(resource),
        metric: fc.constant('concurrency' as const),
        behavior: fc.constant('adaptive' as const),
        threshold: fc.constantFrom(minLimit, maxLimit),
        minLimit: fc.constant(minLimit),
        maxLimit: fc.constant(maxLimit),
      }),
    );
  const relate = fc.record({
    resource: fc.constant(resource),
    threshold: rate,
    strategy: fc.constant('relate' as const),
    refResource: fc.constant(resource === 'a' ? 'b' : 'a'),
  });
  return fc.oneof(
    { weight: 6, arbitrary: qps },
    { weight: 2, arbitrary: concurrency },
    { weight: 1, arbitrary: adaptive },
    { weight: 1, arbitrary: relate },
  );
}

function hotParamRule(resource: Resource, queued: boolean): fc.Arbitrary<HotParamRuleOptions> {
  return fc
    .record({
      param: fc.constantFrom({ paramIndex: 0 }, { paramKey: 'k' }),
      metric: fc.constantFrom('qps' as const, 'qps' as const, 'concurrency' as const),
      behavior: fc.constantFrom('reject' as const, 'throttle' as const),
      threshold: count,
      durationMs: period,
      burstCount: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: count }),
      maxQueueingTimeMs: queue,
      item: fc.option(count, { nil: undefined }),
    })
    .map(({ param, metric, behavior, durationMs, burstCount, maxQueueingTimeMs, item, threshold }) => ({
      resource,
      ...param,
      metric,
      threshold,
      ...(item === undefined ? {} : { specificItems: { v1: item } }),
      ...(metric === 'concurrency'
        ? {}
        : behavior === 'reject'
          ? { durationMs, burstCount }
          : { behavior, durationMs, maxQueueingTimeMs: queued ? maxQueueingTimeMs : 0 }),
    }));
}

function breakerRule(resource: Resource): fc.Arbitrary<CircuitBreakerRuleOptions> {
  return fc
    .record({
      strategy: fc.constantFrom('slowRequestRatio' as const, 'errorRatio' as const, 'errorCount' as const),
      ratio: fc.constantFrom(0, 5e-324, 0.5, 1 - 2 ** -53, 1),
      errors: fc.constantFrom(0, 1, 2 ** 53 - 1, 1e308),
      maxAllowedRtMs: fc.constantFrom(0, 5e-324, 1, MAX_DURATION_MS),
      minRequestAmount: fc.constantFrom(1, 2, 2 ** 53 - 1),
      statIntervalMs: fc.constantFrom(1, 1000, MAX_DURATION_MS),
      retryTimeoutMs: duration,
      halfOpenProbes: fc.constantFrom(1, 2, 2 ** 31, 2 ** 53 - 1),
    })
    .map(({ strategy, ratio, errors, maxAllowedRtMs, ...rule }) => ({
      resource,
      strategy,
      threshold: strategy === 'errorCount' ? errors : ratio,
      ...(strategy === 'slowRequestRatio' ? { maxAllowedRtMs } : {}),
      ...rule,
    }));
}

const systemRule: fc.Arbitrary<SystemRuleOptions> = fc
  .record(
    {
      maxQps: rate,
      maxConcurrency: count,
      maxAvgRtMs: fc.constantFrom(0, 5e-324, 1, MAX_DURATION_MS),
      maxEventLoopDelayMs: fc.constantFrom(0, 5e-324, MAX_DURATION_MS),
      maxCpuUsage: fc.constantFrom(0, 5e-324, 0.5, 1),
      maxHeapUsedBytes: count,
      retryAfterMs: fc.constantFrom(0, 5e-324, 0.4, MAX_DURATION_MS),
    },
    { requiredKeys: [] },
  )
  .filter((rule) => Object.keys(rule).some((key) => key !== 'retryAfterMs'));

const signals: fc.Arbitrary<SystemSignals> = fc.record({
  eventLoopDelayMs: fc.constantFrom(0, 5e-324, 1e9),
  eventLoopUtilization: fc.constantFrom(0, 0.5, 1),
  cpuUsage: fc.constantFrom(0, 5e-324, 1),
  heapUsedBytes: fc.constantFrom(0, 2 ** 53 - 1),
  rssBytes: fc.constantFrom(0, 2 ** 53 - 1),
});

/** One resource's rules: up to two flow rules, a hotspot rule, a breaker; one of them may queue. */
function resourceRules(resource: Resource): fc.Arbitrary<RuleSetOptions> {
  return fc.constantFrom('flow', 'hotParams', 'none').chain((waits) =>
    fc.record({
      flow: fc
        .tuple(
          fc.option(flowRule(resource, waits === 'flow'), { nil: undefined }),
          fc.option(flowRule(resource, false), { nil: undefined }),
        )
        .map((rules) => rules.filter((rule) => rule !== undefined)),
      hotParams: fc
        .option(hotParamRule(resource, waits === 'hotParams'), { nil: undefined })
        .map((rule) => (rule === undefined ? [] : [rule])),
      circuitBreakers: fc
        .option(breakerRule(resource), { nil: undefined })
        .map((rule) => (rule === undefined ? [] : [rule])),
    }),
  );
}

const acquireCount = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1) },
  { weight: 3, arbitrary: fc.constantFrom(0, 2, 2 ** 31, 2 ** 52, 2 ** 53 - 1) },
);

const call: fc.Arbitrary<CallOp> = fc
  .record({
    via: fc.constantFrom('entry' as const, 'enter' as const, 'run' as const),
    resource: fc.constantFrom(...RESOURCES),
    acquireCount,
    origin: fc.constantFrom('', 'o1', 'o2'),
    value: fc.oneof(
      { weight: 1, arbitrary: fc.constant<CallValue>(undefined) },
      { weight: 6, arbitrary: fc.constantFrom<CallValue>(...VALUES) },
      { weight: 1, arbitrary: fc.constant<CallValue>(['v1', 'v2']) },
    ),
    inbound: fc.boolean(),
    outcome: fc.constantFrom('value' as const, 'throw' as const, 'deferred' as const),
    timeoutMs: fc.constantFrom(undefined, undefined, 50),
    fallback: fc.constantFrom('none' as const, 'none' as const, 'value' as const),
  })
  .map((c): CallOp => ({
    op: 'call',
    ...c,
    // Arrays only in sync calls (a call that waits starts at the slot of its only waiting rule).
    value: c.via !== 'entry' && Array.isArray(c.value) ? c.value[0] : c.value,
    unreadable: false,
    ignore: 'none',
  }));

const operation: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: call },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('exit' as const), nth: fc.nat(), error: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), nth: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('abort' as const), nth: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('settle' as const), nth: fc.nat(), reject: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      ms: fc.constantFrom(0, 5e-324, 1e-310, 0.001, 0.5, 1, 499.999, 500, 1000, 60_000, MAX_DURATION_MS),
    }),
  },
);

/** Scenarios with extreme numbers, of up to `maxOps` operations. */
export function extremeScenarios(maxOps = 60): fc.Arbitrary<ExtremeScenario> {
  return fc.record({
    cluster: fc.constant(false as const),
    rules: fc
      .tuple(resourceRules('a'), resourceRules('b'), fc.option(systemRule, { nil: undefined }))
      .map(([a, b, system]): RuleSetOptions => ({
        flow: [...a.flow!, ...b.flow!],
        hotParams: [...a.hotParams!, ...b.hotParams!],
        circuitBreakers: [...a.circuitBreakers!, ...b.circuitBreakers!],
        system: system === undefined ? [] : [system],
      })),
    signals,
    ops: fc.array(operation, { minLength: 10, maxLength: maxOps }),
  });
}
