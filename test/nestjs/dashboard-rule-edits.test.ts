import 'reflect-metadata';
import { Controller, Get, Param, type INestApplication } from '@nestjs/common';
import { FloodgateModule } from '@floodgate/nestjs';
import { runEveryRouteEdits } from '../dashboard/support/every-route-edits';
import { PLATFORMS, startNest } from './nest-harness';

// NestJS guards every handler (the module's global interceptor); the dashboard is mounted on the
// platform's own app, before Nest's routes, and rules sent through its API limit a handler.

@Controller()
class ShopController {
  @Get('users/:id')
  user(@Param('id') id: string) {
    return { id };
  }
}

interface FastifyLike {
  register(plugin: unknown, options: { prefix: string }): unknown;
}

for (const platform of PLATFORMS) {
  runEveryRouteEdits(`NestJS on ${platform}`, 'ShopController.user', async (fg, dash) => {
    const mount = (app: INestApplication): void => {
      if (platform === 'express') app.use('/fg', dash.express());
      else void (app.getHttpAdapter().getInstance() as FastifyLike).register(dash.fastify, { prefix: '/fg' });
    };
    const nest = await startNest(
      platform,
      { imports: [FloodgateModule.forRoot({ floodgate: fg })], controllers: [ShopController] },
      { configure: mount },
    );
    return { server: nest.server, close: () => nest.close() };
  });
}
