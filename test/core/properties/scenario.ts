import fc from 'fast-check';
import type {
  AuthorityRuleOptions,
  CircuitBreakerRuleOptions,
  FlowRuleOptions,
  HotParamRuleOptions,
  RuleSetOptions,
} from '@floodgate/core/rules';
import type { StoreHealth } from '../cluster/memory-cluster-backend';

/**
 * Random scenarios for the engine's property tests: a rule set over two resources and a
 * sequence of operations (calls by `entry`, `enter` and `run`, exits with or without an error,
 * cancels, aborts of queued calls, settling of pending calls, throwing callbacks and parameters,
 * clock advances, and a shared store going up and down).
 *
 * Each resource has at most one rule that can make a call wait (a throttle rule with a queue,
 * or a cluster rule that paces): a call's start is then the slot of that rule, which the
 * spacing property reads.
 */
export const RESOURCES = ['a', 'b'] as const;
/** `o1` is named by rules; the others count as `'other'`; `x` is denied by authority rules. */
export const ORIGINS = ['', 'o1', 'o2', 'x'] as const;
export const VALUES = ['v1', 'v2', 'v3'] as const;

export type Resource = (typeof RESOURCES)[number];
/** A parameter value: absent, one value, or (sync calls only) an array of values. */
export type CallValue = undefined | string | readonly string[];

/** How a guarded function given to `run()` behaves. */
export type RunOutcome =
  /** Returns a value synchronously. */
  | 'value'
  /** Throws synchronously. */
  | 'throw'
  /** Returns a promise the scenario settles later (a `settle` operation, or at the end). */
  | 'deferred'
  /** Returns a thenable whose `then` throws. */
  | 'thenThrows'
  /** Returns a promise that settles only when the scenario ends (always with a `timeoutMs`): it outlives its timeout. */
  | 'never';

export interface CallOp {
  readonly op: 'call';
  readonly via: 'entry' | 'enter' | 'run';
  readonly resource: Resource;
  readonly acquireCount: number;
  readonly origin: string;
  readonly value: CallValue;
  /** Reading the `k` parameter throws (hotspot rules with `paramKey: 'k'` then throw). */
  readonly unreadable: boolean;
  /** An inbound call (counted in the engine's inbound statistics too). */
  readonly inbound: boolean;
  /** For `run`: */
  readonly outcome: RunOutcome;
  readonly timeoutMs: number | undefined;
  readonly fallback: 'none' | 'value' | 'throws';
  readonly ignore: 'none' | 'all' | 'throws';
}

export type Op =
  | CallOp
  /** Exits the nth entry held (modulo), after tracing an error if `error`. */
  | { readonly op: 'exit'; readonly nth: number; readonly error: boolean }
  /** Cancels the nth entry held. */
  | { readonly op: 'cancel'; readonly nth: number }
  /** Aborts the nth `enter()` still pending. */
  | { readonly op: 'abort'; readonly nth: number }
  /** Settles the nth pending `deferred` run, resolving or rejecting it. */
  | { readonly op: 'settle'; readonly nth: number; readonly reject: boolean }
  | { readonly op: 'advance'; readonly ms: number }
  | { readonly op: 'health'; readonly health: StoreHealth };

export interface Scenario {
  readonly cluster: boolean;
  readonly rules: RuleSetOptions;
  readonly ops: readonly Op[];
}

const origin = fc.constantFrom('default', 'default', 'o1', 'other');
const clusterOptions = fc.record({ fallbackToLocal: fc.boolean() });

function flowRule(resource: Resource, waiting: boolean, cluster: boolean): fc.Arbitrary<FlowRuleOptions> {
  const qps = fc
    .record({
      resource: fc.constant(resource),
      threshold: fc.integer({ min: 0, max: 6 }),
      behavior: fc.constantFrom('reject' as const, 'warmUp' as const, 'throttle' as const, 'warmUpThrottle' as const),
      warmUpPeriodMs: fc.constantFrom(1000, 3000),
      limitOrigin: origin,
    })
    .map(({ warmUpPeriodMs, ...rule }): FlowRuleOptions => {
      const warm = rule.behavior === 'warmUp' || rule.behavior === 'warmUpThrottle';
      const paced = rule.behavior === 'throttle' || rule.behavior === 'warmUpThrottle';
      return { ...rule, ...(warm ? { warmUpPeriodMs } : {}), ...(paced ? { maxQueueingTimeMs: 0 } : {}) };
    });
  const concurrency = fc.record({
    resource: fc.constant(resource),
    metric: fc.constant('concurrency' as const),
    threshold: fc.integer({ min: 0, max: 3 }),
    limitOrigin: origin,
  });
  const local = fc.oneof(qps, concurrency);
  const clustered = fc.record({
    resource: fc.constant(resource),
    threshold: fc.integer({ min: 0, max: 6 }),
    limitOrigin: origin,
    cluster: clusterOptions,
  });
  if (waiting) {
    const queued = fc
      .record({
        resource: fc.constant(resource),
        threshold: fc.integer({ min: 1, max: 20 }),
        behavior: fc.constantFrom('throttle' as const, 'warmUpThrottle' as const),
        maxQueueingTimeMs: fc.constantFrom(100, 300, 1000),
        limitOrigin: origin,
      })
      .map((rule): FlowRuleOptions => (rule.behavior === 'warmUpThrottle' ? { ...rule, warmUpPeriodMs: 2000 } : rule));
    if (!cluster) return queued;
    const pacedInStore = fc.record({
      resource: fc.constant(resource),
      threshold: fc.integer({ min: 1, max: 20 }),
      behavior: fc.constant('throttle' as const),
      maxQueueingTimeMs: fc.constantFrom(100, 300),
      cluster: clusterOptions,
    });
    return fc.oneof(queued, pacedInStore);
  }
  return cluster ? fc.oneof(local, clustered) : local;
}

function hotParamRule(resource: Resource, waiting: boolean, cluster: boolean): fc.Arbitrary<HotParamRuleOptions> {
  const param = fc.constantFrom({ paramIndex: 0 }, { paramKey: 'k' });
  const items = fc.option(fc.record({ v1: fc.integer({ min: 0, max: 4 }) }), { nil: undefined });
  const withItems = <T extends object>(rule: T, specificItems: { v1: number } | undefined): T =>
    specificItems === undefined ? rule : { ...rule, specificItems };
  const reject = fc
    .tuple(
      param,
      items,
      fc.record({
        resource: fc.constant(resource),
        threshold: fc.integer({ min: 0, max: 3 }),
        burstCount: fc.integer({ min: 0, max: 2 }),
        durationMs: fc.constantFrom(500, 1000, 2000),
      }),
    )
    .map(([p, specificItems, rule]): HotParamRuleOptions => withItems({ ...rule, ...p }, specificItems));
  const concurrency = fc
    .tuple(
      param,
      items,
      fc.record({
        resource: fc.constant(resource),
        metric: fc.constant('concurrency' as const),
        threshold: fc.integer({ min: 0, max: 2 }),
      }),
    )
    .map(([p, specificItems, rule]): HotParamRuleOptions => withItems({ ...rule, ...p }, specificItems));
  const strictPacing = fc
    .tuple(
      param,
      fc.record({
        resource: fc.constant(resource),
        behavior: fc.constant('throttle' as const),
        threshold: fc.integer({ min: 1, max: 4 }),
        durationMs: fc.constantFrom(500, 1000),
      }),
    )
    .map(([p, rule]): HotParamRuleOptions => ({ ...rule, ...p }));
  const local = fc.oneof(reject, concurrency, strictPacing);
  if (waiting) {
    const queued = fc
      .tuple(
        param,
        fc.record({
          resource: fc.constant(resource),
          behavior: fc.constant('throttle' as const),
          threshold: fc.integer({ min: 1, max: 4 }),
          durationMs: fc.constantFrom(500, 1000),
          maxQueueingTimeMs: fc.constantFrom(200, 600),
        }),
      )
      .map(([p, rule]): HotParamRuleOptions => ({ ...rule, ...p }));
    if (!cluster) return queued;
    return fc.oneof(
      queued,
      queued.map((rule) => ({ ...rule, cluster: { fallbackToLocal: true } })),
    );
  }
  if (!cluster) return local;
  return fc.oneof(
    local,
    reject.map((rule) => ({ ...rule, cluster: { fallbackToLocal: true } })),
  );
}

function breakerRule(resource: Resource): fc.Arbitrary<CircuitBreakerRuleOptions> {
  return fc
    .record({
      resource: fc.constant(resource),
      strategy: fc.constantFrom('slowRequestRatio' as const, 'errorRatio' as const, 'errorCount' as const),
      ratio: fc.constantFrom(0, 0.5, 1),
      count: fc.integer({ min: 0, max: 2 }),
      maxAllowedRtMs: fc.constantFrom(0, 50, 200),
      minRequestAmount: fc.integer({ min: 1, max: 3 }),
      bucketCount: fc.constantFrom(1, 2),
      retryTimeoutMs: fc.constantFrom(100, 500, 2000),
      halfOpenProbes: fc.integer({ min: 1, max: 2 }),
    })
    .map(({ ratio, count, maxAllowedRtMs, ...rule }): CircuitBreakerRuleOptions => ({
      ...rule,
      threshold: rule.strategy === 'errorCount' ? count : ratio,
      ...(rule.strategy === 'slowRequestRatio' ? { maxAllowedRtMs } : {}),
    }));
}

function authorityRule(resource: Resource): fc.Arbitrary<AuthorityRuleOptions> {
  return fc.constantFrom<AuthorityRuleOptions>(
    { resource, strategy: 'deny', origins: ['x'] },
    { resource, strategy: 'allow', origins: ['o1', 'o2'] },
  );
}

/** What rules a scenario draws, per kind: how many per resource (at most). */
export interface RuleMix {
  readonly flow: number;
  readonly hotParams: number;
  readonly circuitBreakers: number;
  readonly authority: boolean;
}

/** The rules of one resource, with at most one rule that can make a call wait. */
function resourceRules(resource: Resource, mix: RuleMix, cluster: boolean): fc.Arbitrary<RuleSetOptions> {
  const waiting = fc.constantFrom<'none' | 'flow' | 'hotParams'>('none', 'flow', 'hotParams');
  return waiting.chain((waits) =>
    fc.record({
      flow: fc
        .tuple(
          fc.array(flowRule(resource, false, cluster), { maxLength: mix.flow }),
          waits === 'flow' && mix.flow > 0 ? flowRule(resource, true, cluster).map((rule) => [rule]) : fc.constant([]),
        )
        .map(([some, queued]) => [...some, ...queued]),
      hotParams: fc
        .tuple(
          fc.array(hotParamRule(resource, false, cluster), { maxLength: mix.hotParams }),
          waits === 'hotParams' && mix.hotParams > 0
            ? hotParamRule(resource, true, cluster).map((rule) => [rule])
            : fc.constant([]),
        )
        .map(([some, queued]) => [...some, ...queued]),
      circuitBreakers: fc.array(breakerRule(resource), { maxLength: mix.circuitBreakers }),
      authority: mix.authority ? fc.array(authorityRule(resource), { maxLength: 1 }) : fc.constant([]),
    }),
  );
}

const callValue = fc.oneof(
  { weight: 1, arbitrary: fc.constant<CallValue>(undefined) },
  { weight: 6, arbitrary: fc.constantFrom<CallValue>(...VALUES) },
  { weight: 1, arbitrary: fc.constantFrom<CallValue>(['v1', 'v2'], ['v2', 'v2'], ['v3', 'v1']) },
);

const call: fc.Arbitrary<CallOp> = fc
  .record({
    via: fc.constantFrom('entry' as const, 'enter' as const, 'enter' as const, 'run' as const, 'run' as const),
    resource: fc.constantFrom(...RESOURCES),
    acquireCount: fc.oneof(
      { weight: 6, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.constantFrom(0, 2, 3) },
    ),
    origin: fc.constantFrom(...ORIGINS),
    value: callValue,
    unreadable: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    inbound: fc.boolean(),
    outcome: fc.constantFrom<RunOutcome>('value', 'throw', 'deferred', 'deferred', 'thenThrows', 'never'),
    timeoutMs: fc.constantFrom(undefined, undefined, 50, 300),
    fallback: fc.constantFrom('none' as const, 'none' as const, 'value' as const, 'throws' as const),
    ignore: fc.constantFrom('none' as const, 'none' as const, 'all' as const, 'throws' as const),
  })
  .map((c): CallOp => {
    // Arrays only in sync calls (a call that waits starts at the slot of its only waiting rule).
    const value = c.via !== 'entry' && Array.isArray(c.value) ? c.value[0] : c.value;
    // A call that never settles always has a timeout, so every scenario can end.
    const timeoutMs = c.outcome === 'never' ? (c.timeoutMs ?? 300) : c.timeoutMs;
    return { op: 'call', ...c, value, timeoutMs };
  });

function operation(cluster: boolean): fc.Arbitrary<Op> {
  const ops: fc.WeightedArbitrary<Op>[] = [
    { weight: 12, arbitrary: call },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('exit' as const), nth: fc.nat(), error: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('cancel' as const), nth: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('abort' as const), nth: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('settle' as const), nth: fc.nat(), reject: fc.boolean() }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('advance' as const),
        ms: fc.constantFrom(0, 1, 20, 20, 60, 60, 100, 250, 499, 500, 1000, 2100),
      }),
    },
  ];
  if (cluster) {
    ops.push({
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant('health' as const),
        health: fc.constantFrom<StoreHealth>('up', 'up', 'timeout', 'error', 'reject', 'throw'),
      }),
    });
  }
  return fc.oneof(...ops);
}

/** Scenarios with rules drawn from `mix`, with or without a shared store, of up to `maxOps` operations. */
export function scenarios(mix: RuleMix, maxOps = 80): fc.Arbitrary<Scenario> {
  return fc.boolean().chain((cluster) =>
    fc.record({
      cluster: fc.constant(cluster),
      rules: fc
        .tuple(resourceRules('a', mix, cluster), resourceRules('b', mix, cluster))
        .map(([a, b]): RuleSetOptions => ({
          flow: [...a.flow!, ...b.flow!],
          hotParams: [...a.hotParams!, ...b.hotParams!],
          circuitBreakers: [...a.circuitBreakers!, ...b.circuitBreakers!],
          authority: [...a.authority!, ...b.authority!],
        })),
      ops: fc.array(operation(cluster), { minLength: Math.min(20, maxOps), maxLength: maxOps, size: 'max' }),
    }),
  );
}
