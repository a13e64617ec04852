import { Floodgate, RuleValidationError } from '@floodgate/core';

describe('rulesRejected', () => {
  it('is emitted with every problem when a rule set fails to load, and the rules in force stay', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    const events: unknown[] = [];
    fg.on('rulesRejected', (event) => events.push(event));
    expect(() => fg.loadRules({ flow: [{ resource: 'r', threshold: -1 }] })).toThrow('flow[0].threshold');
    expect(() => fg.loadFlowRules([{ resource: '', threshold: 1 }])).toThrow('flow[0].resource');
    expect(events).toEqual([
      {
        issues: [{ path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' }],
        error: expect.objectContaining({ code: 'ERR_INVALID_RULE' }),
        source: 'api',
      },
      {
        issues: [{ path: 'flow[0].resource', message: 'must be a non-empty string, got ""' }],
        error: expect.objectContaining({ code: 'ERR_INVALID_RULE' }),
        source: 'api',
      },
    ]);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 1 })]);
  });

  it('names the source the rejected rules were loaded with', () => {
    const fg = new Floodgate();
    const sources: string[] = [];
    fg.on('rulesRejected', (event) => sources.push(event.source));
    expect(() => fg.loadRules({ flow: [{ resource: 'r', threshold: -1 }] }, { source: 'file' })).toThrow(
      'flow[0].threshold',
    );
    expect(() => fg.loadCircuitBreakerRules([{ resource: 'r' } as never], { source: 'redis' })).toThrow(
      'circuitBreakers[0]',
    );
    expect(sources).toEqual(['file', 'redis']);
  });

  it('is emitted by reportRejectedRules for a rule set a source could not read, and nothing changes', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    const events: unknown[] = [];
    fg.on('rulesRejected', (event) => events.push(event));
    const error = new RuleValidationError([{ path: '', message: 'is not valid JSON' }]);
    fg.reportRejectedRules(error, { source: 'file' });
    expect(events).toEqual([{ issues: error.issues, error, source: 'file' }]);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 1 })]);
  });
});
