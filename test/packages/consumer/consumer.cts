// The import matrix's CommonJS consumer (test/packages/import-matrix.ts): the README's imports,
// as a CommonJS user writes them. TypeScript type-checks it under node16, nodenext and bundler
// resolution (`import x = require()` resolves with the `require` condition in all three); the
// plain JavaScript consumer (consumer.cjs) is this file with each `import x = require(...)`
// written `const x = require(...)`.
import express = require('express');
import Fastify = require('fastify');
import Koa = require('koa');
import core = require('@floodgate/core');
import testing = require('@floodgate/core/testing');
import floodgateExpress = require('@floodgate/express');
import floodgateFastify = require('@floodgate/fastify');
import floodgateKoa = require('@floodgate/koa');
import check = require('./checks.cjs');
import loaded = require('./entry-points.cjs');

// One request per second, on engines whose time stands still (a ManualClock): the second
// request is refused however slow the machine.
const oneRequestPerSecond = { routes: { '*': { rateLimit: { threshold: 1 } } } };

async function main() {
  const fastifyApp = Fastify();
  await fastifyApp.register(floodgateFastify.fastifyFloodgate, {
    floodgate: new core.Floodgate({ clock: new testing.ManualClock() }),
    ...oneRequestPerSecond,
  });
  fastifyApp.get('/', async () => 'ok');

  const expressApp = express();
  expressApp.use(
    floodgateExpress.resilience({
      floodgate: new core.Floodgate({ clock: new testing.ManualClock() }),
      ...oneRequestPerSecond,
    }),
  );
  expressApp.get('/', (_req, res) => res.send('ok'));

  const koaApp = new Koa();
  koaApp.use(
    floodgateKoa.resilience({
      floodgate: new core.Floodgate({ clock: new testing.ManualClock() }),
      ...oneRequestPerSecond,
    }),
  );
  koaApp.use((ctx) => {
    ctx.body = 'ok';
  });

  await check(process.argv[2] ?? 'CommonJS', { entryPoints: loaded.entryPoints, fastifyApp, expressApp, koaApp });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
