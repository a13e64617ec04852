import { Floodgate } from '@floodgate/core';

describe('rulesRejected', () => {
  it('is emitted with every problem when a rule set fails to load, and the rules in force stay', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    const events: unknown[] = [];
    fg.on('rulesRejected', (event) => events.push(event));
    expect(() => fg.loadRules({ flow: [{ resource: 'r', threshold: -1 }] })).toThrow('flow[0].threshold');
    expect(() => fg.loadFlowRules([{ resource: '', threshold: 1 }])).toThrow('flow[0].resource');
    expect(events).toEqual([
      { issues: [{ path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' }], error: expect.objectContaining({ code: 'ERR_INVALID_RULE' }), source: 'api' },
      { issues: [{ path: 'flow[0].resource', message: 'must be a non-empty string, got ""' }], error: expect.objectContaining({ code: 'ERR_INVALID_RULE' }), source: 'api' },
    ]);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 1 })]);
  });
});
