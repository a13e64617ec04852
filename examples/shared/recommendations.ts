/**
 * What the three HTTP examples (Express, Koa, Fastify) share: the flaky recommendations
 * upstream, the last good answers kept for the breaker's fallback, and the rules they apply.
 */
import type { Floodgate } from '@floodgate/core';
import type { CircuitBreakerRuleOptions } from '@floodgate/core/rules';

/** Where recommendations come from. */
export interface RecommendationSource {
  forUser(userId: string): Promise<readonly string[]>;
}

/** An upstream that takes `latencyMs` per call (through the engine's clock, so tests can drive it). */
export class FlakyRecommendations implements RecommendationSource {
  /** How long a call takes; over 200 ms it counts as slow. */
  latencyMs = 20;

  constructor(private readonly fg: Floodgate) {}

  async forUser(userId: string): Promise<readonly string[]> {
    await this.fg.clock.sleep(this.latencyMs);
    return [`${userId}: new releases`, `${userId}: because you liked jazz`];
  }
}

/** Options of each example's `createApp()`. */
export interface AppOptions {
  /** The engine. @defaultValue a new Floodgate with the monotonic clock */
  readonly floodgate?: Floodgate;
  /** The recommendations upstream. @defaultValue a {@link FlakyRecommendations} on the engine */
  readonly recommendations?: RecommendationSource;
}

/** The last good recommendations per caller, bounded (oldest caller dropped first). */
export class LastGoodRecommendations {
  private readonly items = new Map<string, readonly string[]>();

  constructor(private readonly capacity = 10_000) {}

  get(caller: string): readonly string[] | undefined {
    return this.items.get(caller);
  }

  remember(caller: string, items: readonly string[]): void {
    if (this.items.size >= this.capacity && !this.items.has(caller)) this.items.delete(this.items.keys().next().value!);
    this.items.set(caller, items);
  }
}

/** Every request: 100 per second. */
export const GLOBAL_LIMIT = { rateLimit: { threshold: 100 } } as const;

/** `GET /users/:id`: 5 requests per second per caller, 20 for the VIP. */
export const PER_CALLER_LIMIT = { threshold: 5, specificItems: { vip: 20 } } as const;

/**
 * `GET /recommendations`: opens when more than half of at least 5 calls in 10 s take over
 * 200 ms; probes again after 5 s.
 */
export const RECOMMENDATIONS_BREAKER: Omit<CircuitBreakerRuleOptions, 'resource'> = {
  strategy: 'slowRequestRatio',
  maxAllowedRtMs: 200,
  threshold: 0.5,
  minRequestAmount: 5,
  statIntervalMs: 10_000,
  retryTimeoutMs: 5_000,
};
