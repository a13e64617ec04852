import { Floodgate, FlowBlockError, RateLimit, floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine(): { clock: ManualClock; fg: Floodgate } {
  const clock = new ManualClock(1000);
  return { clock, fg: new Floodgate({ clock }) };
}

describe('@RateLimit', () => {
  it('blocks the call past the QPS threshold with a FlowBlockError', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 2, floodgate: fg })
      getUser(id: string): string {
        return `user ${id}`;
      }
    }
    const users = new UserService();
    expect(users.getUser('a')).toBe('user a');
    expect(users.getUser('b')).toBe('user b');
    expect(() => users.getUser('c')).toThrow(FlowBlockError);
  });

  it('lets calls through again once the window has moved on', async () => {
    const { clock, fg } = engine();
    class UserService {
      @RateLimit({ threshold: 1, floodgate: fg })
      getUser(): string {
        return 'user';
      }
    }
    const users = new UserService();
    users.getUser();
    expect(() => users.getUser()).toThrow(FlowBlockError);
    await clock.advance(1000);
    expect(users.getUser()).toBe('user');
  });

  it('declares its rule under ClassName.methodName once the class has an instance', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 7, floodgate: fg })
      getUser(): void {}
    }
    new UserService();
    expect(fg.getRules().flow).toEqual([
      expect.objectContaining({ resource: 'UserService.getUser', threshold: 7, metric: 'qps', behavior: 'reject' }),
    ]);
  });

  it('declares the rule of a static method when the class is defined', () => {
    const { fg } = engine();
    class Reports {
      @RateLimit({ threshold: 3, floodgate: fg })
      static build(): void {}
    }
    expect(Reports).toBeDefined();
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'Reports.build', threshold: 3 })]);
  });

  it('declares its rule when the class is defined when the resource is given', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 4, resource: 'users:get', floodgate: fg })
      getUser(): void {}
    }
    expect(UserService).toBeDefined();
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'users:get', threshold: 4 })]);
  });

  it('counts calls under the given resource', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 4, resource: 'users:get', floodgate: fg })
      getUser(): void {}
    }
    new UserService().getUser();
    expect(fg.stats('users:get')?.lastSecond.pass).toBe(1);
  });

  it('keeps a sync method sync: a throttle rule blocks a call that would have to wait', () => {
    const { fg } = engine();
    class Mailer {
      @RateLimit({ threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500, floodgate: fg })
      send(to: string): string {
        return `sent to ${to}`;
      }
    }
    const mailer = new Mailer();
    expect(mailer.send('a')).toBe('sent to a');
    expect(() => mailer.send('b')).toThrow(FlowBlockError);
  });

  it('queues an async method under a throttle rule until its turn comes', async () => {
    const { clock, fg } = engine();
    class Mailer {
      // The method reads its instance: a queued call keeps its `this`.
      readonly from = 'ops';
      @RateLimit({ threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500, floodgate: fg })
      async send(to: string): Promise<string> {
        return `${this.from} sent to ${to}`;
      }
    }
    const mailer = new Mailer();
    await expect(mailer.send('a')).resolves.toBe('ops sent to a');
    let second: string | undefined;
    const pending = mailer.send('b').then((value) => (second = value));
    await clock.advance(99);
    expect(second).toBeUndefined();
    await clock.advance(1);
    await pending;
    expect(second).toBe('ops sent to b');
  });

  it('rejects an async call with a FlowBlockError when the queue would be too long', async () => {
    const { fg } = engine();
    class Mailer {
      @RateLimit({ threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 500, floodgate: fg })
      async send(): Promise<string> {
        return 'sent';
      }
    }
    const mailer = new Mailer();
    await mailer.send();
    await expect(mailer.send()).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'Mailer.send' });
  });

  it('limits a static method under ClassName.methodName', () => {
    const { fg } = engine();
    class Ids {
      static next = 0;
      @RateLimit({ threshold: 1, floodgate: fg })
      static take(): number {
        return ++this.next;
      }
    }
    expect(Ids.take()).toBe(1);
    expect(() => Ids.take()).toThrow(expect.objectContaining({ code: 'ERR_FLOW_BLOCKED', resource: 'Ids.take' }));
  });

  it('gives a subclass override its own resource and its own limit', () => {
    const { fg } = engine();
    class Base {
      @RateLimit({ threshold: 1, floodgate: fg })
      load(): string {
        return 'base';
      }
    }
    class Derived extends Base {
      @RateLimit({ threshold: 2, floodgate: fg })
      override load(): string {
        return 'derived';
      }
    }
    const derived = new Derived();
    const base = new Base();
    expect(derived.load()).toBe('derived');
    expect(derived.load()).toBe('derived');
    expect(() => derived.load()).toThrow(expect.objectContaining({ resource: 'Derived.load' }));
    expect(base.load()).toBe('base');
    expect(
      fg
        .getRules()
        .flow.map((rule) => rule.resource)
        .sort(),
    ).toEqual(['Base.load', 'Derived.load']);
  });

  it('counts an inherited method under the resource of the class that defines it', () => {
    const { fg } = engine();
    class Base {
      @RateLimit({ threshold: 5, floodgate: fg })
      load(): string {
        return 'base';
      }
    }
    class Derived extends Base {}
    new Derived().load();
    expect(fg.stats('Base.load')?.lastSecond.pass).toBe(1);
    expect(fg.stats('Derived.load')).toBeUndefined();
  });

  it('declares its rule on the shared floodgate engine when given no engine', () => {
    class SharedEngineService {
      @RateLimit({ threshold: 9 })
      work(): void {}
    }
    new SharedEngineService();
    expect(floodgate.getRules().flow).toContainEqual(
      expect.objectContaining({ resource: 'SharedEngineService.work', threshold: 9 }),
    );
  });

  it('gives way to loaded rules for its resource, and comes back when they are removed', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 100, floodgate: fg })
      getUser(): string {
        return 'user';
      }
    }
    const users = new UserService();
    fg.loadFlowRules([{ resource: 'UserService.getUser', threshold: 0 }]);
    expect(() => users.getUser()).toThrow(FlowBlockError);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'UserService.getUser', threshold: 0 })]);
    fg.loadFlowRules([]);
    expect(users.getUser()).toBe('user');
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'UserService.getUser', threshold: 100 })]);
  });
});
