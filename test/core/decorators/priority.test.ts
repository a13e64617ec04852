import { Floodgate, RateLimit } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

describe('the priority option of the decorators', () => {
  it('enters every call of the method with its priority', async () => {
    const fg = new Floodgate({ clock: new ManualClock(1000) });
    fg.loadSystemRules([{ maxQps: 10 }]);
    class Jobs {
      @RateLimit({ threshold: 100, floodgate: fg, inbound: true, priority: 'sheddable' })
      async prefetch(): Promise<string> {
        return 'ok';
      }

      @RateLimit({ threshold: 100, floodgate: fg, inbound: true, priority: 'critical' })
      async checkout(): Promise<string> {
        return 'ok';
      }
    }
    const jobs = new Jobs();
    for (let i = 0; i < 8; i++) await expect(jobs.prefetch()).resolves.toBe('ok');
    await expect(jobs.prefetch()).rejects.toMatchObject({ code: 'ERR_SYSTEM_BLOCKED' });
    for (let i = 0; i < 3; i++) await expect(jobs.checkout()).resolves.toBe('ok');
    await expect(jobs.checkout()).rejects.toMatchObject({ code: 'ERR_SYSTEM_BLOCKED' });
  });

  it('fails at decoration time on an unknown priority', () => {
    expect(() => {
      class Bad {
        @RateLimit({ threshold: 1, priority: 'urgent' as never })
        place(): void {}
      }
      return Bad;
    }).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ path: 'priority' })] }));
  });
});
