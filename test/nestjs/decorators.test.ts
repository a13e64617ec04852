import 'reflect-metadata';
import { Controller, Get, Injectable, Module, Param, UseInterceptors, type Type } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import request from 'supertest';
import { Floodgate, RateLimit as CoreRateLimit, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import {
  CircuitBreaker,
  FloodgateInterceptor,
  FloodgateModule,
  HotParam,
  NESTJS_METADATA_KEYS,
  RateLimit,
  SkipFloodgate,
} from '@floodgate/nestjs';
import { PLATFORMS, startFailure, startNest, type NestHarness, type Platform } from './nest-harness';

/** A decorator with its type erased, to apply it where TypeScript would refuse its options. */
const loose = (decorator: (options: any) => unknown) => (options: unknown) =>
  decorator(options) as MethodDecorator & ClassDecorator;

describe('the NestJS decorators, when a class is defined', () => {
  it('record validated rules on the handler, in the order written', () => {
    class Search {
      @RateLimit({ threshold: 20 })
      @RateLimit({ threshold: 500, metric: 'concurrency' })
      find(): void {}
    }
    const rules = Reflect.getMetadata(NESTJS_METADATA_KEYS.rateLimit, Search.prototype.find) as { fields: unknown }[];
    expect(rules.map((rule) => rule.fields)).toEqual([{ threshold: 20 }, { threshold: 500, metric: 'concurrency' }]);
  });

  it('refuse invalid rule fields, naming the decorator, the handler and the field', () => {
    expect(() => {
      class Search {
        @RateLimit({ threshold: -1 })
        find(): void {}
      }
      return Search;
    }).toThrow(
      new RuleValidationError(
        [{ path: 'threshold', message: 'must be a finite number >= 0, got -1' }],
        '@RateLimit on Search.find',
      ),
    );
  });

  it("refuse the core decorators' handler options with what to do instead", () => {
    expect(() => {
      class Feed {
        @(loose(CircuitBreaker)({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000, fallback: 'cached' }))
        feed(): void {}
      }
      return Feed;
    }).toThrow(
      /@CircuitBreaker on Feed\.feed: fallback: is not an option of a NestJS handler: blocks are answered by FloodgateExceptionFilter/,
    );
  });

  it('refuse a @HotParam with no value source, or with two', () => {
    expect(() => {
      class A {
        @(loose(HotParam)({ threshold: 1 }))
        a(): void {}
      }
      return A;
    }).toThrow('@HotParam on A.a: options: needs the value to count per: one of param, query, header, user or ip');
    expect(() => {
      class B {
        @(loose(HotParam)({ query: 'q', header: 'x-q', threshold: 1 }))
        b(): void {}
      }
      return B;
    }).toThrow('@HotParam on B.b: options: give one value source, not query and header');
  });

  it('refuse a header name that is no header name, and ip other than true', () => {
    expect(() =>
      loose(HotParam)({ header: 'x key', threshold: 1 })(class H {}, undefined as never, undefined as never),
    ).toThrow(/header: must be a header name/);
    expect(() =>
      loose(HotParam)({ ip: 'yes', threshold: 1 })(class I {}, undefined as never, undefined as never),
    ).toThrow(/ip: must be true, got "yes"/);
  });

  it('refuse a resource on a controller class: it names one handler', () => {
    expect(() => {
      @RateLimit({ threshold: 1, resource: 'all' })
      class C {}
      return C;
    }).toThrow(
      "@RateLimit on C: resource: names one handler's resource: give it on the handler, not on the controller",
    );
  });

  it('refuse anything but a class or a method', () => {
    expect(() => {
      class F {
        // @ts-expect-error: a property is no method
        @RateLimit({ threshold: 1 })
        field = 1;
      }
      return F;
    }).toThrow(TypeError);
  });

  it('keep their own copy of the options', () => {
    const options = { threshold: 5 };
    class Copy {
      @RateLimit(options)
      find(): void {}
    }
    options.threshold = 500;
    expect(
      (Reflect.getMetadata(NESTJS_METADATA_KEYS.rateLimit, Copy.prototype.find) as { fields: unknown }[])[0]!.fields,
    ).toEqual({ threshold: 5 });
  });
});

// Controllers for the start-up checks.

@Controller('users')
@RateLimit({ threshold: 2 })
class UsersController {
  @Get(':id')
  @HotParam({ param: 'id', threshold: 1 })
  find(@Param('id') id: string) {
    return { id };
  }

  @Get()
  list() {
    return [];
  }

  @Get('own/items')
  @RateLimit({ threshold: 5 })
  own() {
    return {};
  }
}

@Controller('shared')
class SharedResourceController {
  @Get('a')
  @RateLimit({ threshold: 1, resource: 'shared-reads' })
  a() {
    return 'a';
  }

  @Get('b')
  @RateLimit({ threshold: 1, resource: 'shared-reads' })
  b() {
    return 'b';
  }
}

@Controller('health')
@SkipFloodgate()
class HealthController {
  @Get()
  health() {
    return 'ok';
  }

  @Get('deep')
  @SkipFloodgate(false)
  deep() {
    return 'deep';
  }
}

@Controller('orders')
class OrgOrdersController {
  @Get(':orderId')
  @HotParam({ param: 'orgId', threshold: 1 })
  find() {
    return 'order';
  }
}

@Module({ controllers: [OrgOrdersController] })
class OrgModule {}

describe.each(PLATFORMS)('the NestJS decorators at start-up on %s', (platform: Platform) => {
  let fg: Floodgate;
  let harness: NestHarness | undefined;

  beforeEach(() => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const start = async (controllers: Type[], imports: unknown[] = []) => {
    harness = await startNest(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: fg }), ...imports] as never[],
      controllers: controllers as never[],
    });
    return harness.server;
  };
  const fail = (controllers: Type[], options: object = {}, providers: unknown[] = []) =>
    startFailure(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: fg, ...options })],
      controllers: controllers as never[],
      providers: providers as never[],
    });

  it("apply a controller's rules to each of its handlers without its own, each under its own resource", async () => {
    const server = await start([UsersController]);
    await request(server).get('/users').expect(200);
    await request(server).get('/users').expect(200);
    await request(server).get('/users').expect(429);
    await request(server).get('/users/a').expect(200);
    await request(server).get('/users/a').expect(429); // its own @HotParam, and the class's @RateLimit
    for (let i = 0; i < 5; i++) await request(server).get('/users/own/items').expect(200);
    await request(server).get('/users/own/items').expect(429);
    expect(fg.getRules().flow.map((rule) => [rule.resource, rule.threshold])).toEqual(
      expect.arrayContaining([
        ['UsersController.find', 2],
        ['UsersController.list', 2],
        ['UsersController.own', 5],
      ]),
    );
  });

  it('let handlers naming one resource share its limit', async () => {
    const server = await start([SharedResourceController]);
    await request(server).get('/shared/a').expect(200);
    await request(server).get('/shared/b').expect(429);
    expect(fg.stats('shared-reads')!.lastSecond.pass).toBe(1);
  });

  it('leave a skipped controller unguarded, but for a handler marked @SkipFloodgate(false)', async () => {
    const server = await start([HealthController]);
    await request(server).get('/health').expect(200);
    await request(server).get('/health/deep').expect(200);
    expect(fg.stats('HealthController.health')).toBeUndefined();
    expect(fg.stats('HealthController.deep')!.lastSecond.pass).toBe(1);
  });

  it('read route parameters of a RouterModule path', async () => {
    const server = await start([], [OrgModule, RouterModule.register([{ path: 'orgs/:orgId', module: OrgModule }])]);
    await request(server).get('/orgs/acme/orders/1').expect(200);
    await request(server).get('/orgs/acme/orders/2').expect(429);
    await request(server).get('/orgs/globex/orders/1').expect(200);
  });

  it('fail when a module rule names, by class and method, a handler entered under a resource of its own', async () => {
    const error = await fail([SharedResourceController], {
      rules: { flow: [{ resource: 'SharedResourceController.a', threshold: 1 }] },
    });
    expect(error.message).toBe(
      'Invalid Floodgate setup: rules.flow[0].resource: "SharedResourceController.a" names a handler entered as "shared-reads": use that name',
    );
  });

  it('fail when a @HotParam names a route parameter the route does not have, naming both', async () => {
    @Controller('accounts')
    class AccountsController {
      @Get(':id')
      @HotParam({ param: 'accountId', threshold: 1 })
      find() {
        return {};
      }
    }
    const error = await fail([AccountsController]);
    expect(error).toBeInstanceOf(RuleValidationError);
    expect(error.message).toBe(
      'Invalid Floodgate setup: AccountsController.find (GET /accounts/:id) @HotParam.param: "accountId" is not a parameter of the route GET /accounts/:id (it has: id)',
    );
  });

  it('fail when a guarded handler carries a method decorator of @floodgate/core, which would enter a second time', async () => {
    @Controller('legacy')
    class LegacyController {
      @Get()
      @CoreRateLimit({ threshold: 1, floodgate: fg })
      get() {
        return {};
      }
    }
    const error = await fail([LegacyController]);
    expect(error.message).toMatch(
      /LegacyController\.get \(GET \/legacy\): carries a method decorator of @floodgate\/core \(resource LegacyController\.get\), which would enter the engine a second time per request/,
    );
  });

  it('fail when a decorator of @floodgate/nestjs sits on a provider, where it would limit nothing', async () => {
    @Injectable()
    class PricingService {
      @RateLimit({ threshold: 1 })
      price() {
        return 1;
      }
    }
    const error = await fail([], {}, [PricingService]);
    expect(error.message).toMatch(
      /PricingService\.price: @RateLimit from @floodgate\/nestjs guards controller handlers only, so on a provider it limits nothing: import it from @floodgate\/core/,
    );
  });

  it('fail when a handler carries rules but is skipped', async () => {
    @Controller('odd')
    @SkipFloodgate()
    class OddController {
      @Get()
      @RateLimit({ threshold: 1 })
      get() {
        return {};
      }
    }
    const error = await fail([OddController]);
    expect(error.message).toMatch(
      /OddController\.get \(GET \/odd\): carries Floodgate rules but @SkipFloodgate\(\) leaves it unguarded/,
    );
  });

  it('fail, with global: false, when a handler carries rules but no FloodgateInterceptor guards it', async () => {
    @Controller('bare')
    class BareController {
      @Get()
      @RateLimit({ threshold: 1 })
      get() {
        return {};
      }
    }
    @Controller('covered')
    @UseInterceptors(FloodgateInterceptor)
    class CoveredController {
      @Get()
      @RateLimit({ threshold: 1 })
      get() {
        return {};
      }
    }
    const error = await fail([BareController, CoveredController], { global: false });
    expect((error as RuleValidationError).issues).toEqual([
      {
        path: 'BareController.get (GET /bare)',
        message: expect.stringMatching(/^carries Floodgate rules but no FloodgateInterceptor guards it/),
      },
    ]);
  });

  it('fail when the decorators of one handler name different resources', async () => {
    @Controller('split')
    class SplitController {
      @Get()
      @RateLimit({ threshold: 1, resource: 'one' })
      @CircuitBreaker({ strategy: 'errorCount', threshold: 1, retryTimeoutMs: 1000, resource: 'two' })
      get() {
        return {};
      }
    }
    const error = await fail([SplitController]);
    expect(error.message).toMatch(
      /SplitController\.get \(GET \/split\): its decorators name different resources \(one, two\)/,
    );
  });
});
