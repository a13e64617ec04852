/**
 * One HTTP server process: `node bench/dist/http/server-worker.js <framework> <variant>`.
 * Listens on 127.0.0.1 (an ephemeral port), prints `{"port":N}` and serves until SIGTERM.
 */
import type { Server } from 'node:http';
import { FRAMEWORKS, HTTP_VARIANTS, type Framework, type HttpVariant } from './http-variant';

type Starter = (variant: HttpVariant) => Promise<Server>;

/** Each framework's server, required on demand (this is CommonJS) so a process loads one framework only. */
/* eslint-disable @typescript-eslint/no-require-imports */
const STARTERS: Record<Framework, () => Starter> = {
  express: () => (require('./express-server') as typeof import('./express-server')).startExpressServer,
  koa: () => (require('./koa-server') as typeof import('./koa-server')).startKoaServer,
  fastify: () => (require('./fastify-server') as typeof import('./fastify-server')).startFastifyServer,
};
/* eslint-enable @typescript-eslint/no-require-imports */

async function main(): Promise<void> {
  const framework = process.argv[2] as Framework;
  const variant = process.argv[3] as HttpVariant;
  if (!FRAMEWORKS.includes(framework) || !HTTP_VARIANTS.includes(variant))
    throw new Error(`usage: server-worker <${FRAMEWORKS.join('|')}> <${HTTP_VARIANTS.join('|')}>`);
  const server = await STARTERS[framework]()(variant);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server is not listening on a TCP port');
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
  process.on('SIGTERM', () => {
    server.closeAllConnections?.();
    server.close(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
