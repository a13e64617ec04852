/**
 * What every cell of the import matrix (test/packages/import-matrix.ts) checks at run time,
 * however the consumer loaded the packages. `entryPoints` maps each entry point
 * ('@floodgate/core/http', ...) to what the consumer got from it; the three apps were built by the
 * consumer with the adapters it loaded, each limiting every route to one request per second on an engine whose time stands still.
 */
'use strict';
const assert = require('node:assert/strict');
const { createServer } = require('node:http');

/** The statuses of two GET / requests in a row to a Node.js request listener on a loopback port. */
async function twoRequests(listener) {
  const server = createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${server.address().port}/`;
    const first = await fetch(url);
    await first.arrayBuffer();
    const second = await fetch(url);
    await second.arrayBuffer();
    return [first.status, second.status];
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

module.exports = async function check(label, { entryPoints, fastifyApp, expressApp, koaApp }) {
  // One instance of every module: each entry point gives exactly the names its CommonJS module
  // exports, bound to the very same values (an ES module wrapper that copied a module would fail).
  for (const [specifier, loaded] of Object.entries(entryPoints)) {
    const cjs = require(specifier);
    assert.deepEqual(Object.keys(loaded).sort(), Object.keys(cjs).sort(), `${specifier}: exported names`);
    for (const name of Object.keys(cjs))
      assert.equal(loaded[name], cjs[name], `${specifier}: ${name} is not the CommonJS module's`);
  }

  const { Floodgate, isBlockError } = entryPoints['@floodgate/core'];
  const { ManualClock } = entryPoints['@floodgate/core/testing'];
  const fg = new Floodgate({ clock: new ManualClock() });
  fg.loadFlowRules([{ resource: 'search', threshold: 1 }]);
  const entry = fg.tryEntry('search');
  assert.equal(isBlockError(entry), false, 'the first call passes');
  entry.exit();
  assert.equal(isBlockError(fg.tryEntry('search')), true, 'the second call is blocked');

  // The dashboard reads its page from the package's assets/ as it is made: they are packed.
  entryPoints['@floodgate/dashboard'].dashboard(new Floodgate({ clock: new ManualClock() })).close();

  await fastifyApp.ready();
  const fastify = [(await fastifyApp.inject('/')).statusCode, (await fastifyApp.inject('/')).statusCode];
  await fastifyApp.close();
  assert.deepEqual(fastify, [200, 429], 'Fastify');
  assert.deepEqual(await twoRequests(expressApp), [200, 429], 'Express');
  assert.deepEqual(await twoRequests(koaApp.callback()), [200, 429], 'Koa');
  console.log(
    `ok ${label}: ${Object.keys(entryPoints).length} entry points, one instance each; the engine, Express, Koa and Fastify pass one request and answer the next with 429; the dashboard finds its page`,
  );
};
