/**
 * Starts the HTTP suite's server of one framework and variant, listening on 127.0.0.1 (an
 * ephemeral port): what a server-worker process serves, and what the HTTP instruction count
 * drives in its own process.
 */
import type { Server } from 'node:http';
import type { Clock } from '@floodgate/core/testing';
import { FRAMEWORKS, HTTP_VARIANTS, type Framework, type HttpVariant } from './http-variant';

type Starter = (variant: HttpVariant, clock: Clock | undefined) => Promise<Server>;

/** Each framework's server, required on demand (this is CommonJS) so a process loads one framework only. */
/* eslint-disable @typescript-eslint/no-require-imports */
const STARTERS: Record<Framework, () => Starter> = {
  express: () => (require('./express-server') as typeof import('./express-server')).startExpressServer,
  koa: () => (require('./koa-server') as typeof import('./koa-server')).startKoaServer,
  fastify: () => (require('./fastify-server') as typeof import('./fastify-server')).startFastifyServer,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The server of `framework` and `variant`, listening, and its port; its Floodgate engines read
 * `clock` (the default clock if none: the instruction count gives its own).
 * @throws Error naming what is known when `framework` or `variant` is none of the suite's.
 */
export async function startServer(
  framework: string,
  variant: string,
  clock?: Clock,
): Promise<{ server: Server; port: number }> {
  if (!FRAMEWORKS.includes(framework as Framework) || !HTTP_VARIANTS.includes(variant as HttpVariant))
    throw new Error(
      `no server ${framework} ${variant}: frameworks ${FRAMEWORKS.join('|')}, variants ${HTTP_VARIANTS.join('|')}`,
    );
  const server = await STARTERS[framework as Framework]()(variant as HttpVariant, clock);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server is not listening on a TCP port');
  return { server, port: address.port };
}
