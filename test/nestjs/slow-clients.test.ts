import 'reflect-metadata';
import type { Server } from 'node:http';
import { Controller, Get } from '@nestjs/common';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { CircuitBreaker, FloodgateModule, RateLimit } from '@floodgate/nestjs';
import {
  BIG_ANSWER as BIG,
  openRaw,
  rawRequest,
  watchResponses,
  type RawConnection,
  type ResponseEvents,
} from '../http/raw-client';
import { SLOW_RATIO } from '../http/slow-clients';
import { PLATFORMS, startNest, type NestHarness, type Platform } from './nest-harness';

@Controller('big')
class BigController {
  @Get()
  @CircuitBreaker(SLOW_RATIO)
  big() {
    return { big: BIG };
  }

  @Get('limited')
  @RateLimit({ metric: 'concurrency', threshold: 2 })
  limited() {
    return { big: BIG };
  }
}

describe.each(PLATFORMS)('NestJS on %s: clients that read slowly', (platform: Platform) => {
  let clock: ManualClock;
  let fg: Floodgate;
  let harness: NestHarness | undefined;
  let clients: RawConnection[] = [];
  /** The events of the app's responses, counted by the test's own listeners (a new app each test). */
  let responses: ResponseEvents;

  beforeEach(() => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
    clients = [];
  });

  afterEach(async () => {
    for (const client of clients) client.destroy();
    await harness?.close();
    harness = undefined;
  });

  async function start(): Promise<Server> {
    harness = await startNest(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: fg })],
      controllers: [BigController],
    });
    responses = watchResponses(harness.server);
    await harness.app.listen(0, '127.0.0.1');
    return harness.server;
  }

  function slowReaders(server: Server, path: string, count: number): RawConnection[] {
    const opened = Array.from({ length: count }, () => openRaw(server, rawRequest('GET', path), { paused: true }));
    clients.push(...opened);
    return opened;
  }

  it('are not slow calls: the response time ends when the handler answered (#24)', async () => {
    const server = await start();
    const readers = slowReaders(server, '/big', 6);
    await responses.ended.reached(6);
    await clock.advance(1000);
    for (const reader of readers) reader.destroy();
    await responses.closed.reached(6);
    expect(fg.stats('BigController.big')?.concurrency).toBe(0);
    expect(fg.totals('BigController.big')).toMatchObject({ success: 6, error: 0, rtSumMs: 0 });
    expect(fg.circuitState('BigController.big')[0]!.state).toBe('closed');
    await request(server).get('/big').expect(200);
  });

  it('still hold a concurrency slot until they have read their answer or left (#24)', async () => {
    const server = await start();
    const readers = slowReaders(server, '/big/limited', 2);
    await responses.ended.reached(2);
    await request(server).get('/big/limited').expect(429);
    for (const reader of readers) reader.destroy();
    // Closed: the 429 and both readers' answers.
    await responses.closed.reached(3);
    expect(fg.stats('BigController.limited')?.concurrency).toBe(0);
    await request(server).get('/big/limited').expect(200);
  });
});
