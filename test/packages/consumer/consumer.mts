// The import matrix's ES module consumer (test/packages/import-matrix.ts): the README's imports,
// as an ES module user writes them. It has no type annotations, so it is also the plain
// JavaScript consumer (copied as consumer.mjs); TypeScript type-checks it under node16, nodenext
// and bundler resolution.
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { resilience } from '@floodgate/express';
import fastifyFloodgate from '@floodgate/fastify';
import { resilience as koaResilience } from '@floodgate/koa';
import check from './checks.cjs';
import { entryPoints } from './entry-points.mjs';

// One request per second, on engines whose time stands still (a ManualClock): the second
// request is refused however slow the machine.
const oneRequestPerSecond = { routes: { '*': { rateLimit: { threshold: 1 } } } };

const fastifyApp = Fastify();
await fastifyApp.register(fastifyFloodgate, {
  floodgate: new Floodgate({ clock: new ManualClock() }),
  ...oneRequestPerSecond,
});
fastifyApp.get('/', async () => 'ok');

const expressApp = express();
expressApp.use(resilience({ floodgate: new Floodgate({ clock: new ManualClock() }), ...oneRequestPerSecond }));
expressApp.get('/', (_req, res) => res.send('ok'));

const koaApp = new Koa();
koaApp.use(koaResilience({ floodgate: new Floodgate({ clock: new ManualClock() }), ...oneRequestPerSecond }));
koaApp.use((ctx) => {
  ctx.body = 'ok';
});

await check(process.argv[2] ?? 'ES module', { entryPoints, fastifyApp, expressApp, koaApp });
