import { writeIssues } from './helpers';

describe('the priority fields in Sentinel’s rule format', () => {
  it.each([
    ['prioritized', { resource: 'r', threshold: 10, prioritized: true }, 'flow[0].prioritized'],
    [
      'partitions',
      { resource: 'r', metric: 'concurrency', threshold: 10, partitions: { critical: 0.5 } },
      'flow[0].partitions',
    ],
  ] as const)('refuses to write %s, naming the field', (_name, rule, path) => {
    expect(writeIssues({ flow: [rule] })).toEqual([
      { path, message: expect.stringContaining('has no Sentinel equivalent') },
    ]);
    expect(writeIssues({ flow: [rule] }, 'go')).toEqual([
      { path, message: expect.stringContaining('has no sentinel-golang equivalent') },
    ]);
  });

  it('refuses to write a system rule’s priorityFactors', () => {
    const rule = { maxQps: 5, priorityFactors: { sheddable: 0.5 } };
    expect(writeIssues({ system: [rule] })).toEqual([
      { path: 'system[0].priorityFactors', message: expect.stringContaining('has no Sentinel equivalent') },
    ]);
    expect(writeIssues({ system: [rule] }, 'go')).toEqual([
      { path: 'system[0].priorityFactors', message: 'has no sentinel-golang equivalent' },
    ]);
  });
});
