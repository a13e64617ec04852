import 'reflect-metadata';
import type { Server } from 'node:http';
import { Controller, Get } from '@nestjs/common';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { CircuitBreaker, FloodgateModule, RateLimit } from '@floodgate/nestjs';
import { BIG_ANSWER as BIG, countEnded, openRaw, rawRequest, type RawConnection } from '../http/raw-client';
import { SLOW_RATIO } from '../http/slow-clients';
import { until } from '../support/until';
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
  let ended = (): number => 0;

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
    await harness.app.listen(0, '127.0.0.1');
    ended = countEnded(harness.server);
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
    await until(() => ended() === 6, 'every handler to answer');
    await clock.advance(1000);
    for (const reader of readers) reader.destroy();
    await until(() => fg.stats('BigController.big')?.concurrency === 0, 'the slow readers to leave');
    expect(fg.totals('BigController.big')).toMatchObject({ success: 6, error: 0, rtSumMs: 0 });
    expect(fg.circuitState('BigController.big')[0]!.state).toBe('closed');
    await request(server).get('/big').expect(200);
  });

  it('still hold a concurrency slot until they have read their answer or left (#24)', async () => {
    const server = await start();
    const readers = slowReaders(server, '/big/limited', 2);
    await until(() => ended() === 2, 'both handlers to answer');
    await request(server).get('/big/limited').expect(429);
    for (const reader of readers) reader.destroy();
    await until(() => fg.stats('BigController.limited')?.concurrency === 0, 'the readers’ slots to be given back');
    await request(server).get('/big/limited').expect(200);
  });
});
