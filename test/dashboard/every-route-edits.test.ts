import { createServer } from 'node:http';
import Router from '@koa/router';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { blockErrorHandler, resilience as expressResilience } from '@floodgate/express';
import { fastifyFloodgate } from '@floodgate/fastify';
import { resilience as koaResilience } from '@floodgate/koa';
import { runEveryRouteEdits } from './support/every-route-edits';
import { closeServer } from './support/mounts';

// Express, Koa and Fastify, each with every route under guard and the dashboard mounted on the
// app itself (NestJS: test/nestjs/dashboard-rule-edits.test.ts).

runEveryRouteEdits('express', 'GET /users/:id', async (fg, dash) => {
  const app = express();
  app.use('/fg', dash.express());
  app.use(expressResilience({ floodgate: fg, everyRoute: true }));
  app.get('/users/:id', (req, res) => void res.json({ id: req.params.id }));
  app.use(blockErrorHandler({ floodgate: fg }));
  const server = createServer(app);
  return { server, close: () => closeServer(server) };
});

runEveryRouteEdits('koa', 'GET /users/:id', async (fg, dash) => {
  const app = new Koa();
  app.use(dash.koa('/fg'));
  app.use(koaResilience({ floodgate: fg, everyRoute: true }));
  const router = new Router();
  router.get('/users/:id', (ctx) => void (ctx.body = { id: ctx.params.id }));
  app.use(router.routes());
  const server = createServer(app.callback());
  return { server, close: () => closeServer(server) };
});

runEveryRouteEdits('fastify', 'GET /users/:id', async (fg, dash) => {
  const app = Fastify();
  await app.register(dash.fastify, { prefix: '/fg' });
  await app.register(fastifyFloodgate, { floodgate: fg, everyRoute: true });
  app.get('/users/:id', async (request) => ({ id: (request.params as { id: string }).id }));
  await app.ready();
  return {
    server: app.server,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
});
