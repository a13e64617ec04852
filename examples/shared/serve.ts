/**
 * How the HTTP examples serve when run on their own (`npx tsx --conditions=@floodgate/source
 * examples/<framework>/app.ts`): on 127.0.0.1, port `PORT` (default 3000; `PORT=0` takes a free
 * one), printing where and how to try it. Their `createApp()` never listens: tests drive it.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The port when `PORT` is not set. */
export const DEFAULT_PORT = 3000;

/** Where the examples listen: loopback only. */
export const HOST = '127.0.0.1';

/** Starts a server listening on `port` and `HOST`; resolves once it listens. */
export type StartServer = (port: number, host: string) => Promise<Server>;

/** Listens with a Node.js request listener (an Express app, a Koa app's `callback()`). */
export function listenWith(listener: RequestListener): StartServer {
  return async (port, host) => {
    const server = createServer(listener);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return server;
  };
}

/**
 * Serves an example: reads `PORT`, starts it, prints its URL and a request to try; exits with a
 * message naming the problem when `PORT` is not a port or is taken.
 */
export async function serveExample(
  name: string,
  start: StartServer,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const port = env.PORT === undefined || env.PORT === '' ? DEFAULT_PORT : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`examples/${name}: PORT must be a port number (0-65535), got ${env.PORT}`);
    process.exit(1);
  }
  try {
    const server = await start(port, HOST);
    const url = `http://${HOST}:${(server.address() as AddressInfo).port}`;
    console.log(`examples/${name} is listening on ${url}`);
    console.log(`  try: curl -i -H 'x-user-id: alice' ${url}/users/1   (and ${url}/recommendations); Ctrl-C stops it`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    console.error(
      code === 'EADDRINUSE'
        ? `examples/${name}: port ${port} is in use; set PORT to another one (PORT=0 takes a free one)`
        : `examples/${name}: ${String(error)}`,
    );
    process.exit(1);
  }
}
