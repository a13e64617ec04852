import { normalizeRuleSet } from '@floodgate/core/rules';

const issuesOf = (rules: unknown): unknown => {
  try {
    normalizeRuleSet(rules);
  } catch (error) {
    return (error as { issues: unknown }).issues;
  }
  return [];
};

describe('the cluster field of flow rules', () => {
  it('resolves every default', () => {
    const { flow } = normalizeRuleSet({ flow: [{ resource: 'r', threshold: 1, cluster: {} }] });
    expect(flow![0]!.cluster).toEqual({ thresholdType: 'global', fallbackToLocal: true, leaseTokens: 0 });
  });

  it('keeps the settings given', () => {
    const { flow } = normalizeRuleSet({
      flow: [
        {
          resource: 'r',
          threshold: 1,
          cluster: { thresholdType: 'perInstance', fallbackToLocal: false, leaseTokens: 10 },
        },
      ],
    });
    expect(flow![0]!.cluster).toEqual({ thresholdType: 'perInstance', fallbackToLocal: false, leaseTokens: 10 });
  });

  it('rejects a concurrency rule in cluster mode', () => {
    expect(issuesOf({ flow: [{ resource: 'r', metric: 'concurrency', threshold: 1, cluster: {} }] })).toEqual([
      { path: 'flow[0].cluster', message: "cluster mode applies to qps rules only, got metric 'concurrency'" },
    ]);
  });

  it('rejects a warm-up rule in cluster mode', () => {
    expect(
      issuesOf({ flow: [{ resource: 'r', threshold: 1, behavior: 'warmUp', warmUpPeriodMs: 1000, cluster: {} }] }),
    ).toEqual([
      {
        path: 'flow[0].cluster',
        message: "cluster mode applies to behavior 'reject' or 'throttle' only, got 'warmUp'",
      },
    ]);
  });

  it('rejects a relate rule in cluster mode', () => {
    expect(
      issuesOf({ flow: [{ resource: 'r', threshold: 1, strategy: 'relate', refResource: 'db', cluster: {} }] }),
    ).toEqual([{ path: 'flow[0].cluster', message: "cluster mode applies to strategy 'direct' only, got 'relate'" }]);
  });

  it('rejects leaseTokens on a throttle rule', () => {
    expect(
      issuesOf({ flow: [{ resource: 'r', threshold: 1, behavior: 'throttle', cluster: { leaseTokens: 5 } }] }),
    ).toEqual([
      { path: 'flow[0].cluster.leaseTokens', message: "applies to flow rules with behavior 'reject' only, got 5" },
    ]);
  });

  it('rejects a bad value and an unknown field, naming each', () => {
    expect(
      issuesOf({
        flow: [{ resource: 'r', threshold: 1, cluster: { thresholdType: 'avgLocal', leaseTokens: 1.5, flowId: 3 } }],
      }),
    ).toEqual([
      {
        path: 'flow[0].cluster.flowId',
        message: 'unknown field (allowed: thresholdType, fallbackToLocal, leaseTokens)',
      },
      { path: 'flow[0].cluster.leaseTokens', message: 'must be a safe integer >= 0, got 1.5' },
      { path: 'flow[0].cluster.thresholdType', message: "must be one of 'global', 'perInstance', got \"avgLocal\"" },
    ]);
  });
});
