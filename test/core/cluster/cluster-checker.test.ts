import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import type { ClusterFallbackEvent } from '@floodgate/core/metrics';
import type { ClusterBackend, ClusterDecision, ClusterLimiter, ClusterLimiterSpec } from '@floodgate/core/cluster';
import { clustered, type StoreHealth } from './memory-cluster-backend';

/** The parameters of a call whose `key` cannot be read: reading it throws. */
function unreadable(key: string): Record<string, unknown> {
  return Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw new Error(`cannot read ${key}`);
    },
  });
}

const CLUSTER_FLOW = { resource: 'r', threshold: 100, cluster: {} };
const ALICE_CONCURRENCY = { resource: 'r', paramIndex: 0, metric: 'concurrency' as const, threshold: 1 };

describe('cluster checks that fail', () => {
  it('gives back a hotspot value taken by a call whose cluster limiter rejected (#12)', async () => {
    const { fg } = clustered({ flow: [CLUSTER_FLOW], hotParams: [ALICE_CONCURRENCY] }, 'reject');
    await fg.enter('r', { args: ['alice'] }).then(
      (entry) => entry.exit(),
      () => undefined,
    );
    const next = fg.tryEntry('r', { args: ['alice'] });
    expect(next).toHaveProperty('exit');
  });

  it.each<StoreHealth>(['reject', 'throw'])(
    'falls back to the local rule when a limiter breaks its contract (%s) (#12)',
    async (health) => {
      const { fg, fallbacks } = clustered({ flow: [{ ...CLUSTER_FLOW, threshold: 1 }] }, health);
      const entry = await fg.enter('r');
      expect(fallbacks).toMatchObject([{ resource: 'r', backend: 'memory', reason: 'error', decidedBy: 'local' }]);
      await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
      entry.exit();
    },
  );

  it('lets the call pass when a limiter breaks its contract and the rule does not fall back to local', async () => {
    const { fg, fallbacks } = clustered(
      { flow: [{ ...CLUSTER_FLOW, threshold: 0, cluster: { fallbackToLocal: false } }] },
      'reject',
    );
    (await fg.enter('r')).exit();
    expect(fallbacks).toMatchObject([{ reason: 'error', decidedBy: 'pass' }]);
  });

  it('falls back when a custom limiter has no acquireEach for an array value (#12)', async () => {
    const { fg, fallbacks } = clustered(
      { hotParams: [{ resource: 'r', paramIndex: 0, threshold: 1, cluster: {} }] },
      'up',
      true,
    );
    (await fg.enter('r', { args: [['a', 'b']] })).exit();
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toMatchObject({ reason: 'error', decidedBy: 'local' });
    expect(String(fallbacks[0]!.error)).toContain('acquireEach');
    await expect(fg.enter('r', { args: [['b']] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['an unknown status', { status: 'maybe' }],
    ['a negative wait', { status: 'wait', waitMs: -5 }],
    ['a wait no timer can hold', { status: 'wait', waitMs: 2 ** 31 }],
  ])('falls back when a limiter answers %s', async (_what, answer) => {
    const clock = new ManualClock();
    const backend: ClusterBackend = {
      name: 'odd',
      limiter: (): ClusterLimiter => ({
        acquire: () => Promise.resolve(answer as ClusterDecision),
        tryAcquireLeased: () => undefined,
      }),
    };
    const fg = new Floodgate({ clock, cluster: backend });
    const fallbacks: ClusterFallbackEvent[] = [];
    fg.on('clusterFallback', (event) => fallbacks.push(event));
    fg.loadFlowRules([{ resource: 'r', behavior: 'throttle', threshold: 1, cluster: {} }]);
    (await fg.enter('r')).exit();
    expect(fallbacks).toMatchObject([{ reason: 'error', decidedBy: 'local' }]);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('falls back when deciding from leased tokens throws', () => {
    const clock = new ManualClock();
    const backend: ClusterBackend = {
      name: 'odd',
      limiter: (): ClusterLimiter => ({
        acquire: () => Promise.resolve({ status: 'pass' }),
        tryAcquireLeased: () => {
          throw new Error('lease broke');
        },
      }),
    };
    const fg = new Floodgate({ clock, cluster: backend });
    const fallbacks: ClusterFallbackEvent[] = [];
    fg.on('clusterFallback', (event) => fallbacks.push(event));
    fg.loadFlowRules([{ resource: 'r', threshold: 1, cluster: { leaseTokens: 10 } }]);
    fg.entry('r').exit();
    expect(() => fg.entry('r')).toThrow(expect.objectContaining({ code: 'ERR_FLOW_BLOCKED' }));
    expect(fallbacks).toMatchObject([
      { reason: 'error', decidedBy: 'local' },
      { reason: 'error', decidedBy: 'local' },
    ]);
  });

  it('falls back when the backend cannot make a limiter, and keeps the rules loaded', async () => {
    const clock = new ManualClock();
    const backend: ClusterBackend = {
      name: 'odd',
      limiter: (spec: ClusterLimiterSpec): ClusterLimiter => {
        throw new Error(`no limiter for ${spec.key}`);
      },
    };
    const fg = new Floodgate({ clock, cluster: backend });
    const fallbacks: ClusterFallbackEvent[] = [];
    fg.on('clusterFallback', (event) => fallbacks.push(event));
    fg.loadFlowRules([{ resource: 'r', threshold: 1, cluster: {} }]);
    const entry = await fg.enter('r');
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    entry.exit();
    expect(fallbacks[0]).toMatchObject({ reason: 'error', decidedBy: 'local' });
    expect(String(fallbacks[0]!.error)).toContain('no limiter for');
  });
});

describe('cluster refunds', () => {
  it('gives the store its tokens back when a later local check refuses the call', async () => {
    const { fg, backend } = clustered({
      flow: [CLUSTER_FLOW],
      circuitBreakers: [
        { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
      ],
    });
    const failing = await fg.enter('r');
    failing.traceError(new Error('down'));
    failing.exit();
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN' });
    const [limiter] = backend.limiters.values();
    expect(limiter!.releases).toEqual([[1, ['']]]);
    expect(limiter!.windowCount('')).toBe(1);
  });

  it('gives back the store’s tokens and the hotspot value when a later local check throws, and rethrows its error', async () => {
    const { fg, backend } = clustered({
      flow: [CLUSTER_FLOW],
      hotParams: [ALICE_CONCURRENCY, { resource: 'r', paramKey: 'page', threshold: 10 }],
    });
    await expect(fg.enter('r', { args: ['alice'], params: unreadable('page') })).rejects.toThrow('cannot read page');
    const [limiter] = backend.limiters.values();
    expect(limiter!.releases).toEqual([[1, ['']]]);
    expect(limiter!.windowCount('')).toBe(0);
    expect(fg.tryEntry('r', { args: ['alice'] })).toHaveProperty('exit');
  });

  it('gives the store its tokens back when the call is cancelled', async () => {
    const { fg, backend } = clustered({ flow: [CLUSTER_FLOW] });
    (await fg.enter('r')).cancel();
    const [limiter] = backend.limiters.values();
    expect(limiter!.windowCount('')).toBe(0);
    expect(fg.stats('r')!.lastSecond.pass).toBe(0);
  });
});

describe('cluster scopes', () => {
  it('names a long origin or hotspot value in the store by a key of at most 128 characters (#12)', async () => {
    const { fg, backend } = clustered({
      flow: [{ resource: 'r', threshold: 5, limitOrigin: 'other', cluster: {} }],
      hotParams: [{ resource: 'r', paramIndex: 0, threshold: 5, cluster: {} }],
    });
    const long = 'l'.repeat(16_000);
    (await fg.enter('r', { origin: long, args: [long] })).exit();
    const scopes = [...backend.limiters.values()].flatMap((limiter) => limiter.scopes());
    expect(scopes).toHaveLength(2);
    expect(scopes.every((scope) => scope.length <= 128)).toBe(true);
  });
});
