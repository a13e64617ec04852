import { Floodgate, RateLimit, tickingClock, type TickingClock } from '@floodgate/core';
import type { RuleSetOptions, SystemRuleOptions } from '@floodgate/core/rules';
import { ConsecutiveBreaker, circuitBreaker, handleAll } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { expectBlock, expectPass, expectWouldBlock } from './case-checks';
import { loadCoreCopy } from './core-copy';
import { metricsCases } from './metrics-cases';
import { probeRuleKinds, type RuleKindSupport } from './probe-rule-kinds';

/** Who a case measures. */
export type CaseOwner = 'baseline' | 'floodgate' | 'opossum' | 'cockatiel' | 'rate-limiter-flexible';

/** One in-process micro-benchmark. */
export interface CoreCase {
  /** Stable id, used in results and targets (`fg.sync.qps`). */
  readonly id: string;
  readonly owner: CaseOwner;
  /** What is measured, in words. */
  readonly label: string;
  /** Whether `fn` returns a promise (mitata awaits it). */
  readonly async: boolean;
  /** Why the case cannot run yet (a rule kind not implemented); `undefined` when it can. */
  readonly pending?: string;
  /** Builds the state and returns the function measured; throws if it does not do what the label says. */
  readonly setup: () => Promise<() => unknown>;
}

/** The options of an inbound call (an HTTP request), for the system protection cases. */
const INBOUND = Object.freeze({ inbound: true });

/**
 * A system rule with every limit set and none reached (the load limits are read from the real
 * probe, and take the BBR check when a busy benchmark process is over them): the most a system
 * rule costs an entry.
 */
const SYSTEM_RULE: SystemRuleOptions = {
  maxEventLoopDelayMs: 10_000,
  maxEventLoopUtilization: 0.5,
  maxCpuUsage: 0.5,
  maxHeapUsedBytes: 2 ** 40,
  maxRssBytes: 2 ** 40,
  maxConcurrency: 1_000_000,
  maxQps: 1e12,
  maxAvgRtMs: 60_000,
};

/** Distinct hotspot values cycled through by the "100,000 values" cases. */
export const CYCLE_VALUES = 100_000;
const NEVER = 1e9; // a threshold no benchmark reaches
const HOUR_MS = 3_600_000;

/**
 * Every core case, in report order: baselines, Floodgate (sync, blocked, async, hotspot), the
 * peers' equivalents, then the metrics exporter's cases (metrics-cases.ts). One Floodgate engine holds every rule, one resource per case, as an
 * application holds many resources on one engine.
 */
export function coreCases(): CoreCase[] {
  const support = probeRuleKinds();
  const fg = new Floodgate();
  const rules = engineRules(support);
  fg.loadRules(rules);
  // The ticking-clock cases' engine: the same rules, a clock that ticks above 1,000 reads a second.
  const tickClock = tickingClock({ tickAboveReadsPerSecond: 1000, idleBelowReadsPerSecond: 1000 });
  const ticked = { clock: tickClock, engine: new Floodgate({ clock: tickClock }) };
  ticked.engine.loadRules(rules);
  const users = Array.from({ length: CYCLE_VALUES }, (_, i) => `user-${i}`);
  const pendingHot = support.hotParams ? undefined : `hotspot rules not implemented yet (#4): ${support.hotParamsWhy}`;
  const pendingBreaker = support.circuitBreakers
    ? undefined
    : `circuit breakers not implemented yet (#3): ${support.circuitBreakersWhy}`;
  const pendingThree = pendingHot ?? pendingBreaker;
  let cursor = 0;
  const nextUser = (): string => users[(cursor = cursor + 1 === CYCLE_VALUES ? 0 : cursor + 1)]!;

  const cases: CoreCase[] = [
    sync('baseline.call', 'baseline', 'plain function call', async () => {
      const add = (a: number, b: number): number => a + b;
      let i = 0;
      return () => add(i++, 1);
    }),
    asyncCase('baseline.await', 'baseline', 'await a resolved promise', async () => {
      const resolved = Promise.resolve(1);
      return async () => await resolved;
    }),

    sync('fg.sync.none', 'floodgate', 'entry() + exit(), no rule', async () => {
      expectPass(fg, 'r.none');
      return () => fg.entry('r.none').exit();
    }),
    sync('fg.sync.qps', 'floodgate', 'entry() + exit(), one QPS rule', async () => {
      expectPass(fg, 'r.qps');
      return () => fg.entry('r.qps').exit();
    }),
    sync(
      'fg.sync.three',
      'floodgate',
      'entry() + exit(), QPS + breaker + hotspot',
      async () => {
        expectPass(fg, 'r.three', { args: ['user-1'] });
        return () => fg.entry('r.three', { args: ['user-1'] }).exit();
      },
      pendingThree,
    ),

    sync('fg.sync.qpsInbound', 'floodgate', 'entry() + exit(), inbound, one QPS rule', async () => {
      expectPass(fg, 'r.qps', { inbound: true });
      return () => fg.entry('r.qps', INBOUND).exit();
    }),
    sync(
      'fg.sync.qpsSystem',
      'floodgate',
      'entry() + exit(), inbound, one QPS rule + a system rule (every limit, default probe)',
      async () => {
        const guarded = new Floodgate();
        guarded.loadRules({ flow: [{ resource: 'r.qps', threshold: NEVER }], system: [SYSTEM_RULE] });
        expectPass(guarded, 'r.qps', INBOUND);
        return () => guarded.entry('r.qps', INBOUND).exit();
      },
    ),

    // Issue #30: a call with no system rule pays nothing for system protection: the same inbound
    // call on two copies of the core, one with the system kind compiled out (goal <= 1.05×).
    ...([false, true] as const).map((withoutSystemKind) =>
      sync(
        withoutSystemKind ? 'fg.sync.qpsInboundNoSystemKind' : 'fg.sync.qpsInboundCopy',
        'floodgate',
        `entry() + exit(), inbound, one QPS rule, a copy of the core${withoutSystemKind ? ' with the system kind compiled out' : ''}`,
        async () => {
          const copy = loadCoreCopy(withoutSystemKind);
          const own = new copy.Floodgate();
          own.loadRules({ flow: [{ resource: 'r.qps', threshold: NEVER }] });
          own.entry('r.qps', INBOUND).exit();
          return () => own.entry('r.qps', INBOUND).exit();
        },
      ),
    ),

    // Issue #28: a shadow rule costs the entry path what the same rule enforced costs (goal <= 1.1× fg.sync.qps).
    sync('fg.sync.qpsShadow', 'floodgate', 'entry() + exit(), one QPS rule in shadow (not reached)', async () => {
      expectPass(fg, 'r.qps.shadow');
      return () => fg.entry('r.qps.shadow').exit();
    }),
    sync(
      'fg.sync.qpsShadowHit',
      'floodgate',
      'entry() + exit(), one QPS rule in shadow that would refuse every call (wouldBlock, no listener)',
      async () => {
        expectWouldBlock(fg, 'r.qps.shadowHit', 'ERR_FLOW_BLOCKED');
        return () => fg.entry('r.qps.shadowHit').exit();
      },
    ),

    sync('fg.block.tryEntry', 'floodgate', 'blocked tryEntry(), QPS rule (returned)', async () => {
      expectBlock(fg, 'r.blocked', 'ERR_FLOW_BLOCKED');
      return () => fg.tryEntry('r.blocked');
    }),
    sync('fg.block.thrown', 'floodgate', 'blocked entry(), QPS rule (thrown, caught)', async () => {
      expectBlock(fg, 'r.blocked', 'ERR_FLOW_BLOCKED');
      return () => {
        try {
          return fg.entry('r.blocked');
        } catch (error) {
          return error;
        }
      };
    }),
    sync(
      'fg.block.circuit',
      'floodgate',
      'tryEntry() on an open circuit',
      async () => {
        const entry = fg.entry('r.open');
        entry.traceError(new Error('trip'));
        entry.exit();
        expectBlock(fg, 'r.open', 'ERR_CIRCUIT_OPEN');
        return () => fg.tryEntry('r.open');
      },
      pendingBreaker,
    ),
    sync(
      'fg.block.hot',
      'floodgate',
      'blocked tryEntry(), hotspot rule',
      async () => {
        expectBlock(fg, 'r.hot.blocked', 'ERR_HOT_PARAM_BLOCKED', { args: ['user-1'] });
        return () => fg.tryEntry('r.hot.blocked', { args: ['user-1'] });
      },
      pendingHot,
    ),

    asyncCase('fg.async.none', 'floodgate', 'await run(), no rule', async () => {
      const fn = (): number => 1;
      return () => fg.run('r.none', fn);
    }),
    asyncCase('fg.async.qps', 'floodgate', 'await run(), one QPS rule', async () => {
      const fn = (): number => 1;
      return () => fg.run('r.qps', fn);
    }),
    // Issue #30: a decorated method's guarded call costs what run() of the same async method
    // costs (goal <= 1.1× fg.async.qpsAsyncFn); an async function's own promise is in both.
    asyncCase('fg.async.qpsAsyncFn', 'floodgate', 'await run() of an async function, one QPS rule', async () => {
      const fn = async (): Promise<number> => 1;
      return () => fg.run('r.qps', fn);
    }),
    asyncCase('fg.async.decorated', 'floodgate', 'await a @RateLimit async method, one QPS rule', async () => {
      class Service {
        @RateLimit({ floodgate: fg, resource: 'r.decorated', threshold: NEVER })
        async one(): Promise<number> {
          return 1;
        }
      }
      const service = new Service();
      if (!fg.getRules().flow.some((rule) => rule.resource === 'r.decorated'))
        throw new Error('@RateLimit should declare its rule on r.decorated');
      if ((await service.one()) !== 1) throw new Error('r.decorated should pass');
      return () => service.one();
    }),
    asyncCase(
      'fg.async.three',
      'floodgate',
      'await run(), QPS + breaker + hotspot',
      async () => {
        const fn = (): number => 1;
        return () => fg.run('r.three', fn, { args: ['user-1'] });
      },
      pendingThree,
    ),

    // Issue #30: the same calls on an engine whose clock is a tickingClock (ticking while measured;
    // its thread shares the core the process is pinned to, so its ticks are in these figures).
    sync('fg.tick.qps', 'floodgate', 'entry() + exit(), one QPS rule, tickingClock', async () => {
      await untilTicking(ticked.clock, () => ticked.engine.entry('r.qps').exit());
      return () => ticked.engine.entry('r.qps').exit();
    }),
    sync(
      'fg.tick.three',
      'floodgate',
      'entry() + exit(), QPS + breaker + hotspot, tickingClock',
      async () => {
        await untilTicking(ticked.clock, () => ticked.engine.entry('r.three', { args: ['user-1'] }).exit());
        return () => ticked.engine.entry('r.three', { args: ['user-1'] }).exit();
      },
      pendingThree,
    ),
    sync('fg.tick.blocked', 'floodgate', 'blocked tryEntry(), QPS rule (returned), tickingClock', async () => {
      await untilTicking(ticked.clock, () => ticked.engine.tryEntry('r.blocked'));
      expectBlock(ticked.engine, 'r.blocked', 'ERR_FLOW_BLOCKED');
      return () => ticked.engine.tryEntry('r.blocked');
    }),
    asyncCase('fg.tick.async', 'floodgate', 'await run(), one QPS rule, tickingClock', async () => {
      const fn = (): number => 1;
      await untilTicking(ticked.clock, () => ticked.engine.entry('r.qps').exit());
      return () => ticked.engine.run('r.qps', fn);
    }),

    sync(
      'fg.hot.one',
      'floodgate',
      'hotspot only, one hot value',
      async () => {
        expectPass(fg, 'r.hot', { args: ['user-1'] });
        return () => fg.entry('r.hot', { args: ['user-1'] }).exit();
      },
      pendingHot,
    ),
    sync(
      'fg.hot.cycle',
      'floodgate',
      `hotspot only, ${CYCLE_VALUES.toLocaleString('en-US')} values cycling, default capacity (4,000: every call evicts)`,
      async () => {
        expectPass(fg, 'r.hot', { args: [nextUser()] });
        return () => fg.entry('r.hot', { args: [nextUser()] }).exit();
      },
      pendingHot,
    ),
    sync(
      'fg.hot.cycleFit',
      'floodgate',
      `hotspot only, ${CYCLE_VALUES.toLocaleString('en-US')} values cycling, capacity 200,000 (all tracked)`,
      async () => {
        for (let i = 0; i < CYCLE_VALUES; i++) expectPass(fg, 'r.hot.big', { args: [nextUser()] }); // every value tracked before measuring
        return () => fg.entry('r.hot.big', { args: [nextUser()] }).exit();
      },
      pendingHot,
    ),

    asyncCase('opossum.pass', 'opossum', 'opossum fire(), defaults (10 s timeout timer per call)', async () => {
      const breaker = new CircuitBreaker(syncOne, { resetTimeout: HOUR_MS });
      if ((await breaker.fire()) !== 1) throw new Error('opossum should pass');
      return () => breaker.fire();
    }),
    asyncCase('opossum.passNoTimeout', 'opossum', 'opossum fire(), timeout: false', async () => {
      const breaker = new CircuitBreaker(syncOne, { resetTimeout: HOUR_MS, timeout: false });
      if ((await breaker.fire()) !== 1) throw new Error('opossum should pass');
      return () => breaker.fire();
    }),
    asyncCase('opossum.open', 'opossum', 'opossum fire() on an open circuit (rejects)', async () => {
      const breaker = new CircuitBreaker(syncOne, { resetTimeout: HOUR_MS, timeout: false });
      breaker.open();
      const outcome = await breaker.fire().then(
        () => 'passed',
        (error: { code?: string }) => error.code,
      );
      if (outcome !== 'EOPENBREAKER') throw new Error(`opossum should reject open, got ${String(outcome)}`);
      return () => breaker.fire().catch(swallow);
    }),

    asyncCase('cockatiel.pass', 'cockatiel', 'cockatiel circuitBreaker execute()', async () => {
      const policy = circuitBreaker(handleAll, { halfOpenAfter: HOUR_MS, breaker: new ConsecutiveBreaker(5) });
      const fn = (): number => 1;
      if ((await policy.execute(fn)) !== 1) throw new Error('cockatiel should pass');
      return () => policy.execute(fn);
    }),
    asyncCase('cockatiel.open', 'cockatiel', 'cockatiel execute() on an open circuit (rejects)', async () => {
      const policy = circuitBreaker(handleAll, { halfOpenAfter: HOUR_MS, breaker: new ConsecutiveBreaker(1) });
      await policy
        .execute(() => {
          throw new Error('trip');
        })
        .catch(swallow);
      const outcome = await policy
        .execute(() => 1)
        .then(
          () => 'passed',
          (error: Error) => error.constructor.name,
        );
      if (outcome !== 'BrokenCircuitError') throw new Error(`cockatiel should reject open, got ${outcome}`);
      const fn = (): number => 1;
      return () => policy.execute(fn).catch(swallow);
    }),

    asyncCase('rlf.pass', 'rate-limiter-flexible', 'RateLimiterMemory consume(), pass', async () => {
      const limiter = new RateLimiterMemory({ points: NEVER, duration: 1 });
      await limiter.consume('user-1');
      return () => limiter.consume('user-1');
    }),
    asyncCase('rlf.reject', 'rate-limiter-flexible', 'RateLimiterMemory consume(), reject', async () => {
      const limiter = new RateLimiterMemory({ points: 1, duration: HOUR_MS / 1000 });
      await limiter.consume('user-1');
      const outcome = await limiter.consume('user-1').then(
        () => 'passed',
        (res: unknown) => (res instanceof RateLimiterRes ? 'rejected' : String(res)),
      );
      if (outcome !== 'rejected') throw new Error(`rate-limiter-flexible should reject, got ${outcome}`);
      return () => limiter.consume('user-1').catch(swallow);
    }),
    asyncCase(
      'rlf.cycle',
      'rate-limiter-flexible',
      `RateLimiterMemory consume(), ${CYCLE_VALUES.toLocaleString('en-US')} keys cycling`,
      async () => {
        // a long duration keeps every key: its expiry timers never fire inside other measurements
        const limiter = new RateLimiterMemory({ points: NEVER, duration: HOUR_MS / 1000 });
        for (let i = 0; i < CYCLE_VALUES; i++) await limiter.consume(nextUser()); // every key stored before measuring
        return () => limiter.consume(nextUser());
      },
    ),
    ...metricsCases(),
  ];
  return cases;
}

/**
 * The rules of the shared engine: one resource per case. Rule kinds that are not implemented
 * yet are left out (their cases are reported as pending, never measured without their rule).
 * The instruction count (bench/instructions) loads the same rules.
 */
export function engineRules(support: RuleKindSupport): RuleSetOptions {
  const flow = [
    { resource: 'r.qps', threshold: NEVER },
    { resource: 'r.three', threshold: NEVER },
    { resource: 'r.blocked', threshold: 0 },
    { resource: 'r.qps.shadow', threshold: NEVER, mode: 'shadow' as const },
    { resource: 'r.qps.shadowHit', threshold: 0, mode: 'shadow' as const },
  ];
  const circuitBreakers = support.circuitBreakers
    ? [
        // closed and staying closed: calls never fail
        { resource: 'r.three', strategy: 'errorRatio' as const, threshold: 0.5, retryTimeoutMs: 10_000 },
        // opened once by one traced error, open for an hour
        {
          resource: 'r.open',
          strategy: 'errorCount' as const,
          threshold: 0,
          minRequestAmount: 1,
          retryTimeoutMs: HOUR_MS,
        },
      ]
    : [];
  const hotParams = support.hotParams
    ? [
        { resource: 'r.three', paramIndex: 0, threshold: NEVER },
        { resource: 'r.hot', paramIndex: 0, threshold: NEVER },
        { resource: 'r.hot.big', paramIndex: 0, threshold: NEVER, capacity: 200_000 },
        { resource: 'r.hot.blocked', paramIndex: 0, threshold: 0 },
      ]
    : [];
  return { flow, circuitBreakers, hotParams };
}

/** Calls `call` until `clock` ticks: a tickingClock starts after a quarter of a second of reads. */
async function untilTicking(clock: TickingClock, call: () => unknown): Promise<void> {
  const started = performance.now();
  while (!clock.ticking) {
    for (let i = 0; i < 1000; i++) call();
    if (performance.now() - started > 10_000) throw new Error('the tickingClock never started ticking');
  }
}

function sync(
  id: string,
  owner: CaseOwner,
  label: string,
  setup: () => Promise<() => unknown>,
  pending?: string,
): CoreCase {
  return { id, owner, label, async: false, setup, ...(pending === undefined ? {} : { pending }) };
}

function asyncCase(
  id: string,
  owner: CaseOwner,
  label: string,
  setup: () => Promise<() => unknown>,
  pending?: string,
): CoreCase {
  return { id, owner, label, async: true, setup, ...(pending === undefined ? {} : { pending }) };
}

/** A synchronous action typed as opossum's types want (opossum wraps a plain value in a promise). */
const syncOne = ((): number => 1) as unknown as () => Promise<number>;

function swallow(): void {
  // a rejection is the measured outcome
}
