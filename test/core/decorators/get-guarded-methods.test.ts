import 'reflect-metadata';
import { CircuitBreaker, Floodgate, HotParam, RateLimit, getGuardedMethods } from '@floodgate/core';
import { DECORATOR_METADATA_KEYS } from '../../../packages/core/src/decorators/metadata';
import { ManualClock } from '@floodgate/core/testing';

function engine(): Floodgate {
  return new Floodgate({ clock: new ManualClock(1000) });
}

describe('getGuardedMethods', () => {
  it('lists each guarded method with its resource and normalised rules', () => {
    const fg = engine();
    class UserService {
      @RateLimit({ threshold: 10, floodgate: fg })
      @CircuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 })
      getUser(_id: string): void {}

      @HotParam({ paramIndex: 0, threshold: 3, floodgate: fg })
      static byTenant(_tenant: string): void {}

      plain(): void {}
    }
    const listed = getGuardedMethods(UserService);
    expect(listed).toEqual([
      {
        target: UserService,
        name: 'getUser',
        static: false,
        resource: 'UserService.getUser',
        floodgate: fg,
        rules: {
          flow: [
            expect.objectContaining({
              resource: 'UserService.getUser',
              threshold: 10,
              metric: 'qps',
              behavior: 'reject',
            }),
          ],
          circuitBreakers: [
            expect.objectContaining({ resource: 'UserService.getUser', strategy: 'errorRatio', minRequestAmount: 5 }),
          ],
          hotParams: [],
        },
      },
      {
        target: UserService,
        name: 'byTenant',
        static: true,
        resource: 'UserService.byTenant',
        floodgate: fg,
        rules: { flow: [], circuitBreakers: [], hotParams: [expect.objectContaining({ paramIndex: 0, threshold: 3 })] },
      },
    ]);
  });

  it('lists the same methods for an instance as for its class', () => {
    const fg = engine();
    class UserService {
      @RateLimit({ threshold: 10, floodgate: fg })
      getUser(): void {}
    }
    expect(getGuardedMethods(new UserService())).toEqual(getGuardedMethods(UserService));
  });

  it('declares the rules of a class it lists before any instance exists', () => {
    const fg = engine();
    class UserService {
      @RateLimit({ threshold: 10, floodgate: fg })
      getUser(): void {}
    }
    expect(fg.getRules().flow).toEqual([]);
    getGuardedMethods(UserService);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'UserService.getUser' })]);
  });

  it('lists an override under the subclass and an inherited method under its base class', () => {
    const fg = engine();
    class Base {
      @RateLimit({ threshold: 1, floodgate: fg })
      load(): void {}
      @RateLimit({ threshold: 2, floodgate: fg })
      save(): void {}
    }
    class Derived extends Base {
      @RateLimit({ threshold: 3, floodgate: fg })
      override load(): void {}
    }
    expect(getGuardedMethods(Derived).map((m) => [m.resource, m.target])).toEqual([
      ['Derived.load', Derived],
      ['Base.save', Base],
    ]);
  });

  it('leaves out an override that is not decorated', () => {
    const fg = engine();
    class Base {
      @RateLimit({ threshold: 1, floodgate: fg })
      load(): void {}
    }
    class Derived extends Base {
      override load(): void {}
    }
    expect(getGuardedMethods(Derived)).toEqual([]);
  });

  it('records the rules with reflect-metadata under namespaced keys', () => {
    const fg = engine();
    class UserService {
      @RateLimit({ threshold: 10, floodgate: fg })
      getUser(): void {}
    }
    getGuardedMethods(UserService);
    expect(Reflect.getOwnMetadata(DECORATOR_METADATA_KEYS.resource, UserService.prototype, 'getUser')).toBe(
      'UserService.getUser',
    );
    expect(Reflect.getOwnMetadata('floodgate:rate-limit', UserService.prototype, 'getUser')).toEqual([
      expect.objectContaining({ threshold: 10 }),
    ]);
    expect(Reflect.getOwnMetadata('floodgate:circuit-breaker', UserService.prototype, 'getUser')).toEqual([]);
  });

  it('serialises as JSON, the engine as how many resources and rules it has (#25)', () => {
    const fg = engine();
    class UserService {
      @RateLimit({ threshold: 10, floodgate: fg })
      @CircuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 })
      getUser(): void {}
    }
    const json = JSON.parse(JSON.stringify(getGuardedMethods(UserService))) as unknown;
    expect(json).toEqual([
      {
        name: 'getUser',
        static: false,
        resource: 'UserService.getUser',
        floodgate: { resources: 0, rules: 2 },
        rules: {
          flow: [expect.objectContaining({ resource: 'UserService.getUser', threshold: 10 })],
          circuitBreakers: [expect.objectContaining({ resource: 'UserService.getUser', strategy: 'errorRatio' })],
          hotParams: [],
        },
      },
    ]);
  });

  it('refuses something that is neither a class nor an instance', () => {
    expect(() => getGuardedMethods(Object.create(null) as object)).toThrow(TypeError);
  });
});
