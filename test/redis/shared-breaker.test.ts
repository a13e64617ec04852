import fc from 'fast-check';
import { Floodgate, isBlockError, type Entry } from '@floodgate/core';
import type { CircuitBreakerRuleOptions } from '@floodgate/core/rules';
import type { CircuitStateChangeEvent, ClusterFallbackEvent } from '@floodgate/core/metrics';
import { redisCluster, type RedisClusterBackend, type RedisClusterOptions } from '@floodgate/redis';
import { ClusterFixture, HEALTHY_TIMEOUT_MS, T0 } from './support/cluster-fixture';
import { countingCommander, type CountingCommander } from './support/counting-commander';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { testRedisUrl } from '../support/test-services';
import { until } from '../support/until';

// Circuit breakers with `cluster: true` on a real redis-server: one window and one state for
// every instance (engines on backends of their own, as processes), one probe lease per probe,
// transitions announced on every instance, and no round trip per call while closed.

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeEach(() => {
  fixture = new ClusterFixture(redisUrl, `fg-test:shared-breaker:${process.pid}:${n++}`);
});
afterEach(async () => {
  await fixture.close();
});

interface Instance {
  readonly fg: Floodgate;
  readonly backend: RedisClusterBackend;
  readonly commander: CountingCommander;
  /** `from->to` of every circuitStateChange, with the value when there is one. */
  readonly changes: string[];
  readonly fallbacks: ClusterFallbackEvent[];
}

async function instance(options: Partial<RedisClusterOptions> = {}): Promise<Instance> {
  const commander = countingCommander(fixture.client());
  const backend = redisCluster({
    client: commander,
    prefix: fixture.prefix,
    now: () => fixture.clock.now(),
    timeoutMs: HEALTHY_TIMEOUT_MS,
    ...options,
  });
  fixture.backends.push(backend);
  await backend.ready();
  const fg = new Floodgate({ clock: fixture.clock, cluster: backend });
  const changes: string[] = [];
  const fallbacks: ClusterFallbackEvent[] = [];
  fg.on('circuitStateChange', (e: CircuitStateChangeEvent) =>
    changes.push(`${e.from}->${e.to}${e.value === undefined ? '' : `:${e.value}`}`),
  );
  fg.on('clusterFallback', (e) => fallbacks.push(e));
  return { fg, backend, commander, changes, fallbacks };
}

const RULE: CircuitBreakerRuleOptions = {
  resource: 'api',
  strategy: 'errorRatio',
  threshold: 0.5,
  minRequestAmount: 6,
  retryTimeoutMs: 5000,
  cluster: true,
};

/** Loads `rule` on every instance and waits until each is subscribed to the breakers' channel. */
async function load(instances: readonly Instance[], rule: CircuitBreakerRuleOptions = RULE): Promise<void> {
  for (const x of instances) x.fg.loadCircuitBreakerRules([rule]);
  for (const x of instances) await x.backend.ready();
}

/** Lets every instance's reports reach Redis and its answers come back. */
async function settled(...instances: Instance[]): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await until(() => instances.every((x) => x.commander.pending() === 0), 'Redis to answer');
}

/** One call that completes at once, failing or not; waits for its report to be answered. */
async function call(x: Instance, outcome: 'ok' | 'error' = 'ok'): Promise<void> {
  const entry = await x.fg.enter('api');
  if (outcome === 'error') entry.traceError(new Error('boom'));
  entry.exit();
  await settled(x);
}

const stateOf = (x: Instance): string | undefined => x.fg.circuitState('api')[0]?.state;

/** Opens the shared breaker from two instances, three calls each (4 errors in 6). */
async function trip(a: Instance, b: Instance): Promise<void> {
  for (const [x, outcome] of [
    [a, 'ok'],
    [a, 'error'],
    [a, 'error'],
    [b, 'ok'],
    [b, 'error'],
    [b, 'error'],
  ] as const)
    await call(x, outcome);
  await until(
    () => stateOf(a) === 'open' && stateOf(b) === 'open',
    'both instances to learn the shared breaker opened',
  );
}

describe('a shared breaker opening', () => {
  it('opens on every instance when the instances together cross the error ratio, though neither alone reached minRequestAmount', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    for (const x of [a, b]) {
      expect(x.changes).toEqual([`closed->open:${4 / 6}`]);
      await expect(x.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 5000 });
    }
  });

  it('stays closed at exactly the threshold ratio, and opens past it (Sentinel’s >)', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    for (const [x, outcome] of [
      [a, 'ok'],
      [b, 'error'],
      [a, 'error'],
      [b, 'ok'],
      [a, 'ok'],
      [b, 'error'],
    ] as const)
      await call(x, outcome);
    expect([stateOf(a), stateOf(b)]).toEqual(['closed', 'closed']);
    await call(a, 'error');
    await until(() => stateOf(b) === 'open', 'b to learn the breaker opened');
    expect(a.changes).toEqual([`closed->open:${4 / 7}`]);
  });

  it('counts slow calls from every instance for slowRequestRatio', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b], {
      resource: 'api',
      strategy: 'slowRequestRatio',
      maxAllowedRtMs: 100,
      threshold: 0.5,
      minRequestAmount: 4,
      retryTimeoutMs: 5000,
      cluster: true,
    });
    for (const [x, rtMs] of [
      [a, 150],
      [b, 150],
      [a, 10],
      [b, 150],
    ] as const) {
      const entry = await x.fg.enter('api');
      await fixture.clock.advance(rtMs);
      entry.exit();
      await settled(x);
    }
    await until(() => stateOf(a) === 'open' && stateOf(b) === 'open', 'both to learn the breaker opened');
    expect(b.changes).toEqual(['closed->open:0.75']);
  });

  it('opens on the error count of every instance together', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b], {
      resource: 'api',
      strategy: 'errorCount',
      threshold: 2,
      minRequestAmount: 1,
      retryTimeoutMs: 5000,
      cluster: true,
    });
    await call(a, 'error');
    await call(b, 'error');
    expect(stateOf(a)).toBe('closed');
    await call(a, 'error');
    await until(() => stateOf(b) === 'open', 'b to learn the breaker opened');
    expect(b.changes).toEqual(['closed->open:3']);
  });

  it('counts the completions of the current statIntervalMs only, as the local breaker', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b], { ...RULE, minRequestAmount: 4 });
    for (const x of [a, b, a]) await call(x, 'error');
    await fixture.clock.advance(1000);
    for (const [x, outcome] of [
      [b, 'ok'],
      [a, 'ok'],
      [b, 'error'],
      [a, 'ok'],
    ] as const)
      await call(x, outcome);
    expect([stateOf(a), stateOf(b)]).toEqual(['closed', 'closed']);
  });

  it('shares one breaker between instances that run different thresholds for the same rule', async () => {
    const [a, b] = [await instance(), await instance()];
    a.fg.loadCircuitBreakerRules([{ ...RULE, threshold: 0.9 }]);
    b.fg.loadCircuitBreakerRules([RULE]);
    for (const x of [a, b]) await x.backend.ready();
    for (const [x, outcome] of [
      [a, 'ok'],
      [a, 'error'],
      [a, 'error'],
      [a, 'ok'],
      [a, 'error'],
    ] as const)
      await call(x, outcome);
    // b's completion is judged by b's threshold, on the window both filled.
    await call(b, 'error');
    await until(() => stateOf(a) === 'open', 'a to learn b opened the breaker');
  });
});

describe('a shared breaker’s state machine', () => {
  const rules = fc.record({
    strategy: fc.constantFrom('slowRequestRatio' as const, 'errorRatio' as const, 'errorCount' as const),
    ratio: fc.constantFrom(0, 0.25, 0.5, 0.75, 1),
    count: fc.integer({ min: 0, max: 3 }),
    minRequestAmount: fc.integer({ min: 1, max: 5 }),
    window: fc.constantFrom([1000, 1], [2000, 1], [2000, 2], [1500, 3]),
    retryTimeoutMs: fc.constantFrom(500, 1000, 3000),
    halfOpenProbes: fc.integer({ min: 1, max: 2 }),
  });
  // Calls one after another; each shorter than any retryTimeoutMs, so a probe never outlives its lease.
  const steps = fc.array(
    fc.record({
      advanceMs: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 4000 })),
      rtMs: fc.integer({ min: 0, max: 400 }),
      error: fc.boolean(),
    }),
    { minLength: 1, maxLength: 40 },
  );

  /** Enters: the entry, or the refusal's code and retryAfterMs. */
  async function enter(fg: Floodgate, resource: string): Promise<Entry | string> {
    try {
      return await fg.enter(resource);
    } catch (refusal) {
      if (!isBlockError(refusal)) throw refusal;
      return `${refusal.code} ${refusal.retryAfterMs}`;
    }
  }

  it(
    'decides every call of one instance as core’s local breaker does (property)',
    async () => {
      const x = await instance();
      await fc.assert(
        fc.asyncProperty(rules, steps, async (r, list) => {
          const resource = `r${n++}`;
          const threshold = r.strategy === 'errorCount' ? r.count : r.ratio;
          const rule: CircuitBreakerRuleOptions = {
            resource,
            strategy: r.strategy,
            threshold,
            ...(r.strategy === 'slowRequestRatio' ? { maxAllowedRtMs: 200 } : {}),
            minRequestAmount: r.minRequestAmount,
            statIntervalMs: r.window[0]!,
            bucketCount: r.window[1]!,
            retryTimeoutMs: r.retryTimeoutMs,
            halfOpenProbes: r.halfOpenProbes,
          };
          // The local engine runs on the same clock, so both see the same times.
          const local = new Floodgate({ clock: fixture.clock });
          local.loadCircuitBreakerRules([rule]);
          x.fg.loadCircuitBreakerRules([{ ...rule, cluster: true }]);
          const stateOf = (fg: Floodgate): unknown => {
            const { state, retryAfterMs } = fg.circuitState(resource)[0]!;
            return { state, retryAfterMs };
          };
          for (const [i, { advanceMs, rtMs, error }] of list.entries()) {
            await fixture.clock.advance(advanceMs);
            // The same call on both, at the same times.
            const calls = [await enter(x.fg, resource), await enter(local, resource)];
            await fixture.clock.advance(rtMs);
            for (const c of calls) {
              if (typeof c === 'string') continue;
              if (error) c.traceError(new Error('boom'));
              c.exit();
            }
            await settled(x);
            const outcome = (c: Entry | string): string => (typeof c === 'string' ? c : 'pass');
            expect({ i, call: outcome(calls[0]!), state: stateOf(x.fg) }).toEqual({
              i,
              call: outcome(calls[1]!),
              state: stateOf(local),
            });
          }
        }),
        propertyRuns(60),
      );
    },
    Math.max(600_000, propertyTimeoutMs(60)),
  );
});

describe('a shared breaker while closed', () => {
  it('decides calls from the state it learned and reports the completions of a tick in one script call', async () => {
    const x = await instance();
    await load([x]);
    await call(x);
    const before = x.commander.total();
    const entries = await Promise.all(Array.from({ length: 20 }, () => x.fg.enter('api')));
    expect(x.commander.total()).toBe(before);
    for (const e of entries) e.exit();
    await settled(x);
    expect(x.commander.total() - before).toBe(1);
  });

  it('asks Redis again once what it learned is breakerRefreshMs old, catching a transition it was not told of', async () => {
    const x = await instance({ breakerRefreshMs: 1000 });
    await load([x]);
    await call(x);
    // Open the breaker behind the instance's back: no message is published.
    const key = `${fixture.prefix}:b:{circuitBreaker|api|errorRatio|1000/1#0}`;
    await fixture.client().hset(key, 'st', 1, 'ver', 99, 'at', T0 + 60_000);
    (await x.fg.enter('api')).cancel();
    await fixture.clock.advance(1000);
    await expect(x.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 59_000 });
    expect(x.changes).toEqual(['closed->open']);
  });
});

describe('a shared breaker half-open', () => {
  /** Enters `api` on each instance in turn, all at once; the entries that passed, and the refusals. */
  async function rush(instances: readonly Instance[], count: number): Promise<{ passed: Entry[]; refused: unknown[] }> {
    const results = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => instances[i % instances.length]!.fg.enter('api')),
    );
    const passed = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    for (const reason of refused) if (!isBlockError(reason)) throw reason;
    return { passed, refused };
  }

  it('lends the probe to exactly one call of all the instances', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    await fixture.clock.advance(5000);
    const { passed, refused } = await rush([a, b], 10);
    expect(passed).toHaveLength(1);
    expect(refused).toHaveLength(9);
    for (const reason of refused) expect(reason).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 5000 });
    await until(() => stateOf(a) === 'halfOpen' && stateOf(b) === 'halfOpen', 'both to learn the breaker is probing');
  });

  it('closes for every instance once its probes succeeded, each probe lent to one call', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b], { ...RULE, halfOpenProbes: 2 });
    await trip(a, b);
    await fixture.clock.advance(5000);
    const { passed } = await rush([a, b], 8);
    expect(passed).toHaveLength(2);
    passed[0]!.exit();
    await settled(a, b);
    expect([stateOf(a), stateOf(b)]).toEqual(['halfOpen', 'halfOpen']);
    passed[1]!.exit();
    await until(() => stateOf(a) === 'closed' && stateOf(b) === 'closed', 'both to learn the breaker closed');
    for (const x of [a, b]) expect(x.changes).toEqual([`closed->open:${4 / 6}`, 'open->halfOpen', 'halfOpen->closed']);
    await call(b);
  });

  it('reopens for every instance, for another retryTimeoutMs, when a probe fails', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    await fixture.clock.advance(5000);
    await call(b, 'error');
    await until(() => a.changes.length === 3, 'a to learn the probe failed');
    for (const x of [a, b]) {
      expect(x.changes).toEqual([`closed->open:${4 / 6}`, 'open->halfOpen', 'halfOpen->open:1']);
      expect(x.fg.circuitState('api')[0]).toMatchObject({ state: 'open', retryAfterMs: 5000 });
    }
  });

  it('fails a probe whose holder never settles it, once its lease expires, and lets another instance probe after', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    await fixture.clock.advance(5000);
    // a takes the probe and is never heard of again (its process died).
    const lost = await a.fg.enter('api');
    await a.backend.close();
    await until(() => stateOf(b) === 'halfOpen', 'b to hear a took the probe');
    await fixture.clock.advance(5000);
    // The lease expired at its deadline: the breaker reopened then, for another 5 s.
    await expect(b.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 5000 });
    await fixture.clock.advance(5000);
    await call(b);
    expect(stateOf(b)).toBe('closed');
    expect(b.changes).toEqual([
      `closed->open:${4 / 6}`,
      'open->halfOpen',
      'halfOpen->open:1',
      'open->halfOpen',
      'halfOpen->closed',
    ]);
    lost.exit();
  });

  it('ignores a probe settled after its lease expired', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    await fixture.clock.advance(5000);
    const late = await a.fg.enter('api');
    await fixture.clock.advance(10_000);
    await call(b);
    expect(stateOf(b)).toBe('closed');
    late.traceError(new Error('too late'));
    late.exit();
    await settled(a, b);
    expect([stateOf(a), stateOf(b)]).toEqual(['closed', 'closed']);
  });

  it('gives the probe of a call another check refused back, for another call, without failing it', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    // a's own QPS limit refuses every call: that says nothing of the resource.
    a.fg.loadFlowRules([{ resource: 'api', threshold: 0 }]);
    await fixture.clock.advance(5000);
    await expect(a.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await until(() => b.fg.circuitState('api')[0]!.retryAfterMs === undefined, 'b to hear the probe is free');
    await call(b);
    await until(() => stateOf(a) === 'closed', 'a to learn b’s probe closed the breaker');
    expect(b.changes).toEqual([`closed->open:${4 / 6}`, 'open->halfOpen', 'halfOpen->closed']);
  });

  it('gives the probe of a cancelled call back', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b], { ...RULE, halfOpenProbes: 2 });
    await trip(a, b);
    await fixture.clock.advance(5000);
    const [first, second] = [await a.fg.enter('api'), await a.fg.enter('api')];
    await expect(b.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN' });
    first.cancel();
    await until(() => b.fg.circuitState('api')[0]!.retryAfterMs === undefined, 'b to hear a probe is free');
    const third = await b.fg.enter('api');
    second.exit();
    third.exit();
    await until(() => stateOf(a) === 'closed' && stateOf(b) === 'closed', 'both to learn the breaker closed');
  });

  it(
    'lends exactly min(halfOpenProbes, calls) probes, whatever the calls and instances (property)',
    async () => {
      const xs = [await instance(), await instance(), await instance()];
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 24 }),
          async (halfOpenProbes, calls) => {
            const resource = `r${n++}`;
            for (const x of xs)
              x.fg.loadCircuitBreakerRules([
                {
                  resource,
                  strategy: 'errorCount',
                  threshold: 0,
                  minRequestAmount: 1,
                  retryTimeoutMs: 1000,
                  halfOpenProbes,
                  cluster: true,
                },
              ]);
            const failed = await xs[0]!.fg.enter(resource);
            failed.traceError(new Error('boom'));
            failed.exit();
            await settled(...xs);
            await fixture.clock.advance(1000);
            const results = await Promise.allSettled(
              Array.from({ length: calls }, (_, i) => xs[i % xs.length]!.fg.enter(resource)),
            );
            const probes = results.filter((r) => r.status === 'fulfilled');
            expect(probes).toHaveLength(Math.min(halfOpenProbes, calls));
            for (const r of probes) (r as PromiseFulfilledResult<Entry>).value.exit();
            await settled(...xs);
          },
        ),
        propertyRuns(25),
      );
    },
    propertyTimeoutMs(25),
  );
});

describe('a shared breaker’s events', () => {
  it('announces every shared transition on an instance that makes no calls', async () => {
    const [a, b, idle] = [await instance(), await instance(), await instance()];
    await load([a, b, idle]);
    await trip(a, b);
    await until(() => idle.changes.length === 1, 'the idle instance to hear of the opening');
    await fixture.clock.advance(5000);
    await call(a);
    await until(() => idle.changes.length === 3, 'the idle instance to hear of the probe and the closing');
    expect(idle.changes).toEqual([`closed->open:${4 / 6}`, 'open->halfOpen', 'halfOpen->closed']);
  });
});

describe('a shared breaker and sync entry()', () => {
  it('decides a sync entry() from the state it learned', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    a.fg.entry('api').exit();
    await trip(a, b);
    expect(b.fg.tryEntry('api')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 5000 });
  });

  it('refuses a sync entry() while the breaker is due to probe: a probe needs a lease from Redis', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    await fixture.clock.advance(5000);
    expect(a.fg.tryEntry('api')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 0 });
    await call(a);
    a.fg.entry('api').exit();
  });
});

describe('a shared breaker and its rule', () => {
  it('keeps what it learned across a reload of the same rule', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    await trip(a, b);
    a.fg.loadCircuitBreakerRules([RULE]);
    expect(a.fg.circuitState('api')[0]).toMatchObject({ state: 'open' });
    await expect(a.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN' });
  });

  it('stops announcing once its rule is removed', async () => {
    const [a, b] = [await instance(), await instance()];
    await load([a, b]);
    b.fg.loadCircuitBreakerRules([]);
    await trip(a, a);
    await settled(a, b);
    expect(b.changes).toEqual([]);
  });
});
