import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { main } from '../../examples/core/quickstart';

describe('examples/core/quickstart', () => {
  it('passes 5 searches, paces 3 exports within the queue and holds 2 reports', async () => {
    const clock = new ManualClock();
    const running = main(new Floodgate({ clock }));
    await clock.advance(100);
    expect(await running).toEqual({
      search: { passed: 5, blocked: 15 },
      export: { passed: 3, blocked: 7 },
      report: { passed: 2, blocked: 1 },
    });
  });
});
