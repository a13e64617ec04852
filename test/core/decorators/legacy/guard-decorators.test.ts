// Compiled with experimentalDecorators + emitDecoratorMetadata (./tsconfig.json), as NestJS is.
import 'reflect-metadata';
import {
  CircuitBreaker,
  CircuitOpenError,
  Floodgate,
  FlowBlockError,
  HotParam,
  HotParamBlockError,
  RateLimit,
  RuleValidationError,
  getGuardedMethods,
  type BlockError,
  type GuardDecorator,
} from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine(): { clock: ManualClock; fg: Floodgate } {
  const clock = new ManualClock(1000);
  return { clock, fg: new Floodgate({ clock }) };
}

/** A decorator with its type erased, to apply it where TypeScript would refuse it. */
const loose = (decorator: GuardDecorator): any => decorator;

/** A NestJS-style decorator that keeps metadata on the method function itself. */
function Route(path: string): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata('route:path', path, descriptor.value as object);
  };
}

class LookupError extends Error {}

const TWO_ERRORS = { strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 } as const;

describe('legacy decorators (experimentalDecorators)', () => {
  it('declare their rules under ClassName.methodName as soon as the class is defined', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 5, floodgate: fg })
      getUser(_id: string): void {}
    }
    expect(UserService).toBeDefined();
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'UserService.getUser', threshold: 5 })]);
  });

  it('limit an instance method with @RateLimit', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 1, floodgate: fg })
      getUser(id: string): string {
        return `user ${id}`;
      }
    }
    const users = new UserService();
    expect(users.getUser('a')).toBe('user a');
    expect(() => users.getUser('b')).toThrow(FlowBlockError);
  });

  it('limit a static method under ClassName.methodName', () => {
    const { fg } = engine();
    class Ids {
      @RateLimit({ threshold: 1, floodgate: fg })
      static next(): number {
        return 1;
      }
    }
    Ids.next();
    expect(() => Ids.next()).toThrow(expect.objectContaining({ resource: 'Ids.next' }));
  });

  it('open a @CircuitBreaker on traced business errors and answer with a cached fallback', () => {
    const { fg } = engine();
    class Feed {
      private readonly cache = ['cached'];
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg, fallback: 'cached' })
      latest(): string[] {
        throw new LookupError('down');
      }
      cached(error: unknown): string[] {
        return error instanceof CircuitOpenError ? [...this.cache, 'open'] : this.cache;
      }
    }
    const feed = new Feed();
    expect(feed.latest()).toEqual(['cached']);
    expect(feed.latest()).toEqual(['cached']);
    expect(feed.latest()).toEqual(['cached', 'open']);
    expect(fg.stats('Feed.latest')?.lastSecond.error).toBe(2);
  });

  it('limit per argument value with @HotParam', () => {
    const { fg } = engine();
    class UserService {
      @HotParam({ paramIndex: 0, threshold: 1, floodgate: fg })
      getProfile(userId: string): string {
        return userId;
      }
    }
    const users = new UserService();
    users.getProfile('alice');
    expect(() => users.getProfile('alice')).toThrow(HotParamBlockError);
    expect(users.getProfile('bob')).toBe('bob');
  });

  it('make one entry per call and check in the engine order when stacked', () => {
    const { fg } = engine();
    class Orders {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      @RateLimit({ threshold: 2 })
      @HotParam({ paramIndex: 0, threshold: 5 })
      place(_customer: string): void {
        throw new LookupError('down');
      }
    }
    const orders = new Orders();
    expect(() => orders.place('c')).toThrow(LookupError);
    expect(() => orders.place('c')).toThrow(LookupError);
    expect(() => orders.place('c')).toThrow(FlowBlockError);
    expect(fg.stats('Orders.place')?.lastSecond.pass).toBe(2);
  });

  it('queue an async method and keep a sync one from waiting under a throttle rule', async () => {
    const { clock, fg } = engine();
    class Mailer {
      @RateLimit({ threshold: 10, behavior: 'throttle', floodgate: fg, resource: 'mail' })
      async sendAsync(): Promise<string> {
        return 'async';
      }
      @RateLimit({ threshold: 10, behavior: 'throttle', floodgate: fg, resource: 'mail' })
      sendSync(): string {
        return 'sync';
      }
    }
    const mailer = new Mailer();
    expect(mailer.sendSync()).toBe('sync');
    expect(() => mailer.sendSync()).toThrow(FlowBlockError);
    const queued = mailer.sendAsync();
    await clock.advance(100);
    await expect(queued).resolves.toBe('async');
  });

  it('treat a method declared to return a Promise as async, so it may queue', async () => {
    const { clock, fg } = engine();
    class Mailer {
      @RateLimit({ threshold: 10, behavior: 'throttle', floodgate: fg })
      send(): Promise<string> {
        return Promise.resolve('sent');
      }
    }
    const mailer = new Mailer();
    await mailer.send();
    const queued = mailer.send();
    await clock.advance(100);
    await expect(queued).resolves.toBe('sent');
  });

  it('give a subclass override its own resource', () => {
    const { fg } = engine();
    class Base {
      @RateLimit({ threshold: 1, floodgate: fg })
      load(): string {
        return 'base';
      }
    }
    class Derived extends Base {
      @RateLimit({ threshold: 1, floodgate: fg })
      override load(): string {
        return 'derived';
      }
    }
    new Derived().load();
    expect(() => new Derived().load()).toThrow(expect.objectContaining({ resource: 'Derived.load' }));
    expect(new Base().load()).toBe('base');
  });

  it('call a blockHandler named by a method, on the same instance, with the arguments and the BlockError', () => {
    const { fg } = engine();
    class Search {
      readonly prefix = 'busy';
      @RateLimit({ threshold: 0, floodgate: fg, blockHandler: 'busy', fallback: () => 'fallback' })
      find(query: string): string {
        return query;
      }
      busy(query: string, error: BlockError): string {
        return `${this.prefix}: ${query} (${error.code})`;
      }
    }
    expect(new Search().find('cats')).toBe('busy: cats (ERR_FLOW_BLOCKED)');
  });

  it('surface the error of a throwing handler', async () => {
    const { fg } = engine();
    const own = new Error('handler failed');
    class Search {
      @RateLimit({
        threshold: 0,
        floodgate: fg,
        fallback: () => {
          throw own;
        },
      })
      async find(): Promise<string> {
        return 'found';
      }
    }
    await expect(new Search().find()).rejects.toBe(own);
  });

  it('keep metadata other decorators put on the method function', () => {
    const { fg } = engine();
    class UsersController {
      @RateLimit({ threshold: 5, floodgate: fg })
      @Route('/users/:id')
      getUser(_id: string): void {}
    }
    expect(Reflect.getMetadata('route:path', UsersController.prototype.getUser)).toBe('/users/:id');
    expect(Reflect.getMetadata('design:paramtypes', UsersController.prototype, 'getUser')).toEqual([String]);
  });

  it('list the guarded methods with their resources and rules', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 5, floodgate: fg })
      @CircuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 })
      getUser(): void {}
      @HotParam({ param: (tenant: string) => tenant, paramKey: 'tenant', threshold: 2, floodgate: fg })
      static byTenant(_tenant: string): void {}
    }
    expect(getGuardedMethods(UserService)).toEqual([
      expect.objectContaining({
        name: 'getUser',
        static: false,
        resource: 'UserService.getUser',
        rules: {
          flow: [expect.objectContaining({ threshold: 5 })],
          circuitBreakers: [expect.objectContaining({ strategy: 'errorRatio' })],
          hotParams: [],
        },
      }),
      expect.objectContaining({
        name: 'byTenant',
        static: true,
        resource: 'UserService.byTenant',
        rules: {
          flow: [],
          circuitBreakers: [],
          hotParams: [expect.objectContaining({ paramKey: 'tenant', threshold: 2 })],
        },
      }),
    ]);
    expect(Reflect.getMetadata('floodgate:rate-limit', UserService.prototype, 'getUser')).toEqual([
      expect.objectContaining({ threshold: 5 }),
    ]);
  });

  it('give way to loaded rules for their resource, and come back when they are removed', () => {
    const { fg } = engine();
    class UserService {
      @RateLimit({ threshold: 100, floodgate: fg })
      getUser(): string {
        return 'user';
      }
    }
    const users = new UserService();
    fg.loadRules({ flow: [{ resource: 'UserService.getUser', threshold: 0 }] });
    expect(() => users.getUser()).toThrow(FlowBlockError);
    fg.loadRules({ flow: [] });
    expect(users.getUser()).toBe('user');
  });
});

describe('bad decoration with legacy decorators', () => {
  it('refuses a field, naming the class and the field', () => {
    expect(() => {
      class Bad {
        @loose(RateLimit({ threshold: 1 }))
        limit = 3;
      }
      return Bad;
    }).toThrow(new TypeError('@RateLimit can only decorate methods, not the field Bad.limit'));
  });

  it('refuses an accessor', () => {
    expect(() => {
      class Bad {
        @loose(RateLimit({ threshold: 1 }))
        get value(): number {
          return 1;
        }
      }
      return Bad;
    }).toThrow('@RateLimit can only decorate methods, not the accessor Bad.value');
  });

  it('refuses a class', () => {
    expect(() => {
      @loose(RateLimit({ threshold: 1 }))
      class Whole {}
      return Whole;
    }).toThrow('@RateLimit cannot decorate class Whole: decorate its methods');
  });

  it('refuses invalid options at decoration time, naming Class.method', () => {
    expect(() => {
      class Bad {
        @CircuitBreaker({ strategy: 'errorRatio', threshold: 2, retryTimeoutMs: 1000 })
        getUser(): void {}
      }
      return Bad;
    }).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_RULE',
        message: expect.stringMatching(/^@CircuitBreaker on Bad\.getUser: threshold: /),
      }),
    );
  });

  it('refuses a handler name that is not a method of the class at decoration time', () => {
    let error: unknown;
    try {
      class Bad {
        @RateLimit({ threshold: 1, blockHandler: 'missing' })
        getUser(): void {}
      }
      expect(Bad).toBeUndefined();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuleValidationError);
    expect((error as Error).message).toBe(
      '@RateLimit on Bad.getUser: blockHandler: must name an instance method of Bad, got "missing"',
    );
  });
});
