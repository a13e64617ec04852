import type { Floodgate } from '@floodgate/core';
import { HELLO_RESOURCE, NEVER } from './http-variant';

/**
 * The rules of the Floodgate variants, given to each framework's adapter for `GET /hello`: a
 * QPS rule high enough never to block (threshold 0 in the blocked variant, so every request
 * is refused with 429), an errorRatio breaker that stays closed (the route never fails), and a
 * per-user hotspot rule on what `param` reads (the `x-user-id` header).
 */
export function floodgateRouteRules<Req>(blocked: boolean, param: (req: Req) => unknown) {
  return {
    rateLimit: { threshold: blocked ? 0 : NEVER },
    circuitBreaker: { strategy: 'errorRatio' as const, threshold: 0.5, retryTimeoutMs: 5000 },
    hotParam: { param, threshold: NEVER },
  };
}

/** Throws unless the engine holds exactly the three rules on the hello route (so the variant measures what it says). */
export function assertThreeRules(floodgate: Floodgate): void {
  const rules = floodgate.getRules();
  const count = (list: readonly { resource: string }[]): number =>
    list.filter((rule) => rule.resource === HELLO_RESOURCE).length;
  const found = {
    flow: count(rules.flow),
    circuitBreakers: count(rules.circuitBreakers),
    hotParams: count(rules.hotParams),
  };
  if (found.flow !== 1 || found.circuitBreakers !== 1 || found.hotParams !== 1) {
    throw new Error(
      `expected one flow, one breaker and one hotspot rule on ${HELLO_RESOURCE}, found ${JSON.stringify(found)}`,
    );
  }
}
