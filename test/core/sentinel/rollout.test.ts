import { fromSentinelRules, toSentinelRules } from '@floodgate/core/sentinel';
import { writeIssues } from './helpers';

describe('Sentinel rules and rollout', () => {
  it('refuses to write a shadow rule, which Sentinel would enforce in full', () => {
    expect(writeIssues({ flow: [{ resource: 'r', threshold: 5, mode: 'shadow' }] })).toEqual([
      {
        path: 'flow[0].mode',
        message:
          'has no Sentinel equivalent: Sentinel enforces every rule it loads, so write this rule once it is enforced in full',
      },
    ]);
  });

  it('refuses to write a rule enforced by percentage, in either dialect', () => {
    expect(
      writeIssues(
        {
          circuitBreakers: [
            { resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000, enforcePercent: 10 },
          ],
        },
        'go',
      ).map((issue) => issue.path),
    ).toEqual(['circuitBreakers[0].enforcePercent']);
  });

  it('writes a rule enforced in full as before, and reads Sentinel rules as enforced', () => {
    const written = toSentinelRules({ flow: [{ resource: 'r', threshold: 5, mode: 'enforce', enforcePercent: 100 }] });
    const read = fromSentinelRules(written);
    expect(read.flow![0]).not.toHaveProperty('mode');
    expect(read.flow![0]).not.toHaveProperty('enforcePercent');
  });
});
