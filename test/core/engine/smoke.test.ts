import { Floodgate, ManualClock } from '@floodgate/core';

describe('smoke', () => {
  it('blocks the third call of a 2 QPS rule', () => {
    const fg = new Floodgate({ clock: new ManualClock(1000) });
    fg.loadFlowRules([{ resource: 'r', threshold: 2 }]);
    fg.entry('r').exit();
    fg.entry('r').exit();
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });
});
