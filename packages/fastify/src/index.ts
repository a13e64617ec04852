import { fastifyFloodgate, ipKey } from './fastify-floodgate';

export { fastifyFloodgate, ipKey };
export type { FastifyFallback, FloodgatePluginOptions, FloodgateRouteConfig, IpKeyOptions } from './fastify-options';
export default fastifyFloodgate;
