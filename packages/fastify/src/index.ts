import { fastifyFloodgate } from './fastify-floodgate';

export { fastifyFloodgate };
export type { FastifyFallback, FloodgatePluginOptions, FloodgateRouteConfig } from './fastify-options';
export default fastifyFloodgate;
