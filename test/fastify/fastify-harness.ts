import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyFloodgate, { type FastifyFallback } from '@floodgate/fastify';
import {
  adaptOptions,
  adaptRoute,
  sendReply,
  type AppSpec,
  type Harness,
  type Started,
  type Translation,
} from '../http/app-spec';

const translation: Translation<FastifyRequest, FastifyFallback> = {
  request: (request, params) => ({
    headers: request.headers,
    params: params ?? (request.params as Record<string, string>) ?? {},
    // Fastify reads the body before the handler runs.
    body: () => Promise.resolve(typeof request.body === 'string' ? request.body : JSON.stringify(request.body ?? '')),
  }),
  fallback: (fallback) => (request, reply, error) =>
    sendReply(fallback(error, translation.request(request)), (r) => reply.code(r.status ?? 200).send(r.body)),
};

/** Builds scenario apps with @floodgate/fastify: the plugin first, routes opting in through config.floodgate. */
export const fastifyHarness: Harness = {
  name: 'fastify',
  async start(spec: AppSpec): Promise<Started> {
    const errors: unknown[] = [];
    const app = Fastify();
    try {
      app.setErrorHandler((error: unknown, _request: FastifyRequest, reply: FastifyReply) => {
        errors.push(error);
        return reply.code(500).send({ error: 'internal' });
      });
      await app.register(fastifyFloodgate, { floodgate: spec.floodgate, ...adaptOptions(spec.options, translation) });
      for (const route of spec.routes) {
        app.route({
          method: route.method,
          url: route.path,
          config: route.guard === undefined ? {} : { floodgate: adaptRoute(route.guard, translation) as never },
          handler: async (request, reply) => {
            const r = await route.handler(translation.request(request));
            return reply.code(r.status ?? 200).send(r.body);
          },
        });
      }
      await app.ready();
    } catch (error) {
      await app.close();
      throw error;
    }
    return {
      server: app.server,
      errors,
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  },
};
