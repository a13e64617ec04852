import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { FloodgateModule, RateLimit } from '@floodgate/nestjs';
import { PLATFORMS, startNest, type NestHarness } from './nest-harness';

@Controller('jobs')
class JobsController {
  @Get('run')
  @RateLimit({ threshold: 100 })
  run(): { ok: true } {
    return { ok: true };
  }
}

describe.each(PLATFORMS)('request priority on NestJS (%s)', (platform) => {
  let harness: NestHarness | undefined;

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('reads the header, capped at default: sheddable requests are refused first, critical claims count as default', async () => {
    const fg = new Floodgate({ clock: new ManualClock(10_000) });
    fg.loadSystemRules([{ maxQps: 10 }]);
    harness = await startNest(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: fg, priority: { header: 'x-priority' } })],
      controllers: [JobsController],
    });
    const get = (priority: string) => request(harness!.server).get('/jobs/run').set('x-priority', priority);
    for (let i = 0; i < 8; i++) await get('sheddable').expect(200);
    await get('sheddable').expect(503);
    await get('critical').expect(200);
    await get('critical').expect(200);
    await get('critical').expect(503);
  });
});
