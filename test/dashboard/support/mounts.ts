import type { Server } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import type { Dashboard } from '@floodgate/dashboard';

/** A server with the dashboard mounted at `prefix`, as each framework mounts it. */
export interface Mounted {
  readonly server: Server;
  readonly prefix: string;
  close(): Promise<void>;
}

/** The dashboard mounted on Express, Koa and Fastify at `/fg`, and standalone (`listen()`) at `/`. */
export const MOUNTS: Readonly<Record<string, (dash: Dashboard) => Promise<Mounted>>> = {
  express: async (dash) => {
    const app = express();
    app.use('/fg', dash.express());
    const server = app.listen(0, '127.0.0.1');
    return { server, prefix: '/fg', close: () => closeServer(server) };
  },
  koa: async (dash) => {
    const app = new Koa();
    app.use(dash.koa('/fg'));
    app.use((ctx) => void (ctx.body = 'the app'));
    const server = app.listen(0, '127.0.0.1');
    return { server, prefix: '/fg', close: () => closeServer(server) };
  },
  fastify: async (dash) => {
    const app = Fastify();
    await app.register(dash.fastify, { prefix: '/fg' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { server: app.server, prefix: '/fg', close: () => app.close() };
  },
  standalone: async (dash) => {
    const { server, close } = await dash.listen();
    return { server, prefix: '', close };
  },
};

/** Mounts `dash` the way `name` does, once it listens. */
export async function mountOn(name: string, dash: Dashboard): Promise<Mounted> {
  const mounted = await MOUNTS[name]!(dash);
  if (!mounted.server.listening) await new Promise((resolve) => mounted.server.once('listening', resolve));
  return mounted;
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
