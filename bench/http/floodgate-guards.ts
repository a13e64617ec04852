import type { RequestHandler } from 'express';
import type { FastifyInstance } from 'fastify';
import type { Middleware } from 'koa';
import { PendingVariantError } from './http-variant';

/*
 * HOOK (issue #6): the Floodgate adapters are being written. Until @floodgate/express, /koa and
 * /fastify export their factories, the floodgate variants report "pending" and are not
 * measured. When they land, these three functions build, through the adapters only: a QPS rule
 * high enough never to block (threshold 0 for the blocked variant), an errorRatio breaker and a
 * per-user hotspot rule on `GET /hello`.
 */

/** Express middleware guarding the hello route with the three rules. */
export async function floodgateExpressGuard(blocked: boolean): Promise<RequestHandler> {
  void blocked;
  throw await pending('@floodgate/express');
}

/** Koa middleware guarding the hello route with the three rules. */
export async function floodgateKoaGuard(blocked: boolean): Promise<Middleware> {
  void blocked;
  throw await pending('@floodgate/koa');
}

/** Registers the Floodgate Fastify plugin with the three rules on the hello route. */
export async function registerFloodgateFastify(app: FastifyInstance, blocked: boolean): Promise<void> {
  void app;
  void blocked;
  throw await pending('@floodgate/fastify');
}

async function pending(name: string): Promise<PendingVariantError> {
  const exported = Object.keys((await import(name)) as object).filter((key) => key !== 'default');
  return new PendingVariantError(`${name} not implemented yet (#6): exports ${exported.length === 0 ? 'nothing' : exported.join(', ')}`);
}
