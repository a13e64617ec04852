import type { BlockError, Floodgate } from '@floodgate/core';
import type { IpKeyOptions as CoreIpKeyOptions, ResilienceOptions, RouteOptions } from '@floodgate/core/http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Answers a blocked request instead of the 429/503 problem response; it must send the reply. */
export type FastifyFallback = (request: FastifyRequest, reply: FastifyReply, error: BlockError) => unknown;

/** Options of the plugin: rules by route pattern (`'*'` for every request) and the common options. */
export type FloodgatePluginOptions = ResilienceOptions<FastifyRequest, FastifyFallback>;

/** A route's `config.floodgate`: its rules (`rateLimit`, `circuitBreaker`, `hotParam`) and `fallback`, or `false` for none. */
export type FloodgateRouteConfig = RouteOptions<FastifyRequest, FastifyFallback> | false;

/** Options of {@link ipKey}. */
export type IpKeyOptions = CoreIpKeyOptions;

declare module 'fastify' {
  interface FastifyInstance {
    /** The Floodgate engine guarding this instance's routes. */
    floodgate: Floodgate;
  }
  interface FastifyContextConfig {
    /** Floodgate rules of the route. */
    floodgate?: FloodgateRouteConfig;
  }
}
