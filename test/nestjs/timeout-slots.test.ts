import 'reflect-metadata';
import { Controller, Get, Injectable } from '@nestjs/common';
import request from 'supertest';
import { Floodgate, RateLimit as ServiceRateLimit } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { FloodgateModule } from '@floodgate/nestjs';
import { until } from '../support/until';
import { PLATFORMS, startNest, type NestHarness, type Platform } from './nest-harness';

/** The engine the service's core decorator declares on: set before the classes below are defined. */
const clock = new ManualClock(10_000);
const serviceEngine = new Floodgate({ clock });

/** What the service's calls do: each waits for the test, ignoring its timeout. */
const work = {
  pending: [] as (() => void)[],
  running: 0,
  most: 0,
};

@Injectable()
class ReportService {
  @ServiceRateLimit({ metric: 'concurrency', threshold: 2, timeoutMs: 1000, floodgate: serviceEngine })
  async build(): Promise<{ built: true }> {
    work.most = Math.max(work.most, ++work.running);
    try {
      await new Promise<void>((resolve) => work.pending.push(resolve));
      return { built: true };
    } finally {
      work.running--;
    }
  }
}

@Controller('reports')
class ReportsController {
  constructor(private readonly reports: ReportService) {}

  @Get()
  build() {
    return this.reports.build();
  }
}

describe.each(PLATFORMS)(
  'NestJS on %s: a service method under a core decorator with timeoutMs',
  (platform: Platform) => {
    let harness: NestHarness | undefined;

    afterEach(async () => {
      while (work.pending.length > 0) work.pending.pop()!();
      await until(() => work.running === 0, 'every call to settle');
      await harness?.close();
      harness = undefined;
      work.most = 0;
    });

    it('runs no more calls at once than its concurrency limit when timeouts answer the requests (#24)', async () => {
      harness = await startNest(platform, {
        imports: [FloodgateModule.forRoot({ floodgate: new Floodgate({ clock: new ManualClock() }) })],
        controllers: [ReportsController],
        providers: [ReportService],
      });
      const server = harness.server;
      const first = [request(server).get('/reports'), request(server).get('/reports')].map((r) =>
        r.then((x) => x.status),
      );
      await until(() => work.running === 2, 'both calls to start');
      await clock.advance(1000);
      expect(await Promise.all(first)).toEqual([500, 500]);
      expect(serviceEngine.stats('ReportService.build')!.concurrency).toBe(2);
      await request(server).get('/reports').expect(429);
      work.pending.shift()!();
      await until(() => serviceEngine.stats('ReportService.build')!.concurrency === 1, 'the settled call’s slot');
      const next = request(server)
        .get('/reports')
        .then((r) => r.status);
      await until(() => work.running === 2, 'the next call to start');
      expect(work.most).toBe(2);
      work.pending.shift()!();
      work.pending.shift()!();
      expect(await next).toBe(200);
    });
  },
);
