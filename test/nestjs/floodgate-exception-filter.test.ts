import 'reflect-metadata';
import {
  Catch,
  Controller,
  Get,
  Injectable,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
  type Type,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import request from 'supertest';
import { BlockError, Floodgate, RateLimit as ServiceRateLimit } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { FloodgateModule, RateLimit, type FloodgateModuleOptions } from '@floodgate/nestjs';
import { PLATFORMS, startNest, type NestHarness, type Platform } from './nest-harness';

/** The engine the service's core decorator declares on: set before the classes below are defined. */
const serviceClock = new ManualClock(10_000);
const serviceEngine = new Floodgate({ clock: serviceClock });

@Injectable()
class QuoteService {
  @ServiceRateLimit({ threshold: 1, floodgate: serviceEngine })
  quote(): { price: number } {
    return { price: 42 };
  }
}

@Controller('quotes')
class QuotesController {
  constructor(private readonly quotes: QuoteService) {}

  @Get()
  quote() {
    return this.quotes.quote();
  }

  @Get('limited')
  @RateLimit({ threshold: 1 })
  limited() {
    return { ok: true };
  }
}

/** An app's own answer to blocks: 418 with the wait in ms. */
@Catch(BlockError)
class TeapotFilter implements ExceptionFilter<BlockError> {
  catch(error: BlockError, host: ArgumentsHost): void {
    const response = host
      .switchToHttp()
      .getResponse<{ raw?: unknown; statusCode: number; code?: (s: number) => { send(b: string): void } }>();
    const body = JSON.stringify({ teapot: true, code: error.code, retryAfterMs: error.retryAfterMs ?? null });
    if (response.code !== undefined) {
      response.code(418).send(body);
      return;
    }
    const express = response as unknown as { status(s: number): { type(t: string): { send(b: string): void } } };
    express.status(418).type('application/json').send(body);
  }
}

@Controller('teapot')
@UseFilters(TeapotFilter)
class TeapotController {
  @Get()
  @RateLimit({ threshold: 1 })
  brew() {
    return { brewed: true };
  }
}

describe.each(PLATFORMS)('FloodgateExceptionFilter on %s', (platform: Platform) => {
  let fg: Floodgate;
  let harness: NestHarness | undefined;

  beforeEach(async () => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
    await serviceClock.advance(10_000); // a fresh second for QuoteService.quote
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  async function start(
    options: Partial<FloodgateModuleOptions> & { exceptionFilter?: boolean } = {},
    providers: unknown[] = [],
    controllers: Type[] = [QuotesController],
  ) {
    harness = await startNest(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: fg, ...options })],
      controllers: controllers as never[],
      providers: [QuoteService, ...providers] as never[],
    });
    return harness.server;
  }

  it('answers a block thrown by a service method under a @floodgate/core decorator like its own blocks', async () => {
    const server = await start();
    await request(server).get('/quotes').expect(200, { price: 42 });
    const blocked = await request(server).get('/quotes').expect(429);
    expect(blocked.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(blocked.headers['ratelimit-policy']).toBe('"flow";q=1;w=1');
    expect(JSON.parse(blocked.text)).toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'QuoteService.quote' });
    // The handler's own resource was entered once per request, and a block is no failure.
    expect(fg.stats('QuotesController.quote')!.lastSecond.pass).toBe(2);
    expect(fg.stats('QuotesController.quote')!.lastSecond.error).toBe(0);
  });

  it('calls onBlock with each block and the request before answering', async () => {
    const seen: { code: string; path: string }[] = [];
    const server = await start({
      onBlock: (error, req: { url: string }) => seen.push({ code: error.code, path: req.url }),
    });
    await request(server).get('/quotes/limited').expect(200);
    await request(server).get('/quotes/limited').expect(429);
    expect(seen).toEqual([{ code: 'ERR_FLOW_BLOCKED', path: '/quotes/limited' }]);
  });

  it('fails the request (500) when onBlock throws', async () => {
    const server = await start({
      onBlock: () => {
        throw new Error('observer broke');
      },
    });
    await request(server).get('/quotes/limited').expect(200);
    await request(server).get('/quotes/limited').expect(500);
  });

  it("leaves blocks to the app's own global filter with exceptionFilter: false", async () => {
    const server = await start({ exceptionFilter: false }, [{ provide: APP_FILTER, useClass: TeapotFilter }]);
    await request(server).get('/quotes/limited').expect(200);
    const answered = await request(server).get('/quotes/limited').expect(418);
    expect(JSON.parse(answered.text)).toEqual({ teapot: true, code: 'ERR_FLOW_BLOCKED', retryAfterMs: 1000 });
  });

  it("lets a controller's @UseFilters filter answer its blocks instead", async () => {
    const server = await start({}, [], [TeapotController, QuotesController]);
    await request(server).get('/teapot').expect(200);
    await request(server).get('/teapot').expect(418);
    await request(server).get('/quotes/limited').expect(200);
    await request(server).get('/quotes/limited').expect(429);
  });
});
