import 'reflect-metadata';
import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import request from 'supertest';
import { Floodgate, floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import {
  FloodgateModule,
  RateLimit,
  type FloodgateModuleFactoryOptions,
  type FloodgateOptionsFactory,
} from '@floodgate/nestjs';
import { PLATFORMS, startFailure, startNest, type NestHarness, type Platform } from './nest-harness';

@Controller('books')
class BooksController {
  constructor(readonly engine: Floodgate) {}

  @Get()
  list() {
    return [];
  }

  @Get(':isbn')
  find(@Param('isbn') isbn: string) {
    return { isbn };
  }

  @Get('top/ten')
  @RateLimit({ threshold: 3 })
  top() {
    return [];
  }
}

/** Stands for an app's configuration (ConfigService). */
@Injectable()
class Settings {
  static engine: Floodgate;
  readonly booksPerSecond = 2;
}

@Module({ providers: [Settings], exports: [Settings] })
class SettingsModule {}

@Injectable()
class FloodgateSettings implements FloodgateOptionsFactory {
  createFloodgateOptions(): FloodgateModuleFactoryOptions {
    return { floodgate: Settings.engine, defaults: { rateLimit: { threshold: 1 } } };
  }
}

describe.each(PLATFORMS)('FloodgateModule on %s', (platform: Platform) => {
  let fg: Floodgate;
  let harness: NestHarness | undefined;

  beforeEach(() => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
    Settings.engine = fg;
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const start = async (imports: unknown[]) => {
    harness = await startNest(platform, { imports: imports as never[], controllers: [BooksController] });
    return harness.server;
  };
  const fail = (imports: unknown[]) =>
    startFailure(platform, { imports: imports as never[], controllers: [BooksController] });

  it('provides its engine for injection as Floodgate', async () => {
    await start([FloodgateModule.forRoot({ floodgate: fg })]);
    expect(harness!.app.get(BooksController).engine).toBe(fg);
  });

  it('guards with the shared floodgate engine by default', async () => {
    await start([FloodgateModule.forRoot()]);
    expect(harness!.app.get(Floodgate)).toBe(floodgate);
  });

  it('declares its rules at start-up and withdraws them when the app closes', async () => {
    const server = await start([
      FloodgateModule.forRoot({ floodgate: fg, rules: { flow: [{ resource: 'BooksController.list', threshold: 1 }] } }),
    ]);
    await request(server).get('/books').expect(200);
    await request(server).get('/books').expect(429);
    await harness!.close();
    harness = undefined;
    expect(fg.getRules().flow.filter((rule) => rule.resource === 'BooksController.list')).toEqual([]);
  });

  it('limits per route parameter with a rules.hotParams rule naming it with paramKey', async () => {
    const server = await start([
      FloodgateModule.forRoot({
        floodgate: fg,
        rules: { hotParams: [{ resource: 'BooksController.find', paramKey: 'isbn', threshold: 1 }] },
      }),
    ]);
    await request(server).get('/books/1').expect(200);
    await request(server).get('/books/1').expect(429);
    await request(server).get('/books/2').expect(200);
  });

  it('applies defaults to every handler without rules of that kind of its own, each with its own counter', async () => {
    const server = await start([FloodgateModule.forRoot({ floodgate: fg, defaults: { rateLimit: { threshold: 1 } } })]);
    await request(server).get('/books').expect(200);
    await request(server).get('/books').expect(429);
    await request(server).get('/books/1').expect(200);
    for (let i = 0; i < 3; i++) await request(server).get('/books/top/ten').expect(200);
    await request(server).get('/books/top/ten').expect(429);
  });

  it('takes its options from a factory with forRootAsync({ imports, inject, useFactory })', async () => {
    const server = await start([
      FloodgateModule.forRootAsync({
        imports: [SettingsModule],
        inject: [Settings],
        useFactory: (settings: Settings) => ({
          floodgate: fg,
          defaults: { rateLimit: { threshold: settings.booksPerSecond } },
        }),
      }),
    ]);
    await request(server).get('/books').expect(200);
    await request(server).get('/books').expect(200);
    await request(server).get('/books').expect(429);
  });

  it('takes its options from a class with forRootAsync({ useClass })', async () => {
    const server = await start([FloodgateModule.forRootAsync({ useClass: FloodgateSettings })]);
    await request(server).get('/books').expect(200);
    await request(server).get('/books').expect(429);
  });

  it('fails at start-up naming each bad option', async () => {
    const error = await fail([
      FloodgateModule.forRoot({
        floodgate: fg,
        headers: 'draft-9' as never,
        defaults: { rateLimit: { threshold: -1 } },
        retries: 3,
      } as never),
    ]);
    expect(error).toBeInstanceOf(RuleValidationError);
    expect((error as RuleValidationError).issues).toEqual([
      {
        path: 'retries',
        message: expect.stringMatching(
          /^unknown option \(allowed: floodgate, origin, priority, onBlock, headers, isFailure, rules, defaults, skipIf, global, exceptionFilter\)$/,
        ),
      },
      { path: 'defaults.rateLimit.threshold', message: 'must be a finite number >= 0, got -1' },
      {
        path: 'headers',
        message: "must be one of 'draft-6', 'draft-7', 'draft-8', false or { draft, onPass }, got \"draft-9\"",
      },
    ]);
    expect(error.message).toMatch(/^Invalid FloodgateModule options: /);
  });

  it('fails at start-up naming a rule for a method that is no handler of the controller it names', async () => {
    const error = await fail([
      FloodgateModule.forRoot({ floodgate: fg, rules: { flow: [{ resource: 'BooksController.lsit', threshold: 1 }] } }),
    ]);
    expect(error.message).toBe(
      'Invalid Floodgate setup: rules.flow[0].resource: "BooksController.lsit" names no handler of BooksController (it has: list, find, top)',
    );
  });

  it('fails at start-up naming a hotspot rule whose paramKey the route does not have', async () => {
    const error = await fail([
      FloodgateModule.forRoot({
        floodgate: fg,
        rules: { hotParams: [{ resource: 'BooksController.find', paramKey: 'id', threshold: 1 }] },
      }),
    ]);
    expect(error.message).toBe(
      'Invalid Floodgate setup: rules.hotParams[0].paramKey: "id" is not a parameter of the route GET /books/:isbn (it has: isbn)',
    );
  });

  it('fails at start-up when a forRootAsync factory gives what the module definition decides', async () => {
    const error = await fail([
      FloodgateModule.forRootAsync({
        useFactory: () => ({ floodgate: fg, global: false }) as FloodgateModuleFactoryOptions,
      }),
    ]);
    expect(error.message).toBe(
      'Invalid FloodgateModule options: global: is decided when the module is defined: give it to forRootAsync({ ... }) itself, not from its factory',
    );
  });
});

describe('FloodgateModule definitions', () => {
  it('refuse forRootAsync without a factory, naming the choices', () => {
    expect(() => FloodgateModule.forRootAsync({})).toThrow(
      'Invalid FloodgateModule.forRootAsync options: options: needs one of useFactory, useClass or useExisting',
    );
  });

  it('refuse a global option that is not a boolean', () => {
    expect(() => FloodgateModule.forRoot({ global: 'yes' as never })).toThrow(
      'Invalid FloodgateModule options: global: must be a boolean, got "yes"',
    );
  });
});
