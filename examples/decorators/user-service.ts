/**
 * A service guarded with method decorators: a per-user hotspot limit, a circuit breaker with a
 * cached fallback over a flaky dependency, and a plain rate limit.
 *
 * Decorators declare their rules when the class is defined, so the engine they use is chosen
 * then. An app usually defines its classes at module level on the shared `floodgate` engine
 * (leave `floodgate` out); this example defines its class in a factory, so that each caller
 * (a test with a ManualClock, say) gets an engine of its own.
 */
import { CircuitBreaker, CircuitOpenError, Floodgate, HotParam, RateLimit } from '@floodgate/core';

/** A user's profile. */
export interface Profile {
  readonly id: string;
  readonly name: string;
}

/** Recommendations, and where they came from. */
export interface Recommendations {
  readonly items: readonly string[];
  readonly source: 'live' | 'cache' | 'cache (circuit open)';
}

/** What the service calls: a profile store, a flaky recommendations API, a search index. */
export interface UserBackend {
  loadProfile(userId: string): Promise<Profile>;
  recommendations(userId: string): Promise<readonly string[]>;
  search(query: string): readonly string[];
}

/** What the guarded service offers. */
export interface UserServiceApi {
  /** At most 2 calls per second per user; rejects with a `HotParamBlockError` past that. */
  getProfile(userId: string): Promise<Profile>;
  /** Live while the API is healthy; the last good answer while it fails or its circuit is open. */
  getRecommendations(userId: string): Promise<Recommendations>;
  /** At most 5 calls per second in all; throws a `FlowBlockError` past that. Stays sync. */
  search(query: string): readonly string[];
}

/** Shown to a user with no last good answer. */
export const POPULAR: readonly string[] = Object.freeze(['bestsellers', 'new arrivals']);

/**
 * Builds the service over `backend`, its rules declared on `fg`.
 * @example
 * const users = createUserService(backend);
 * await users.getRecommendations('alice');
 */
export function createUserService(backend: UserBackend, fg: Floodgate = new Floodgate()): UserServiceApi {
  // Resources are named after this class: UserService.getProfile, UserService.search...
  class UserService implements UserServiceApi {
    private readonly lastGood = new Map<string, readonly string[]>();

    @HotParam({ param: (userId: string) => userId, paramKey: 'userId', threshold: 2, floodgate: fg })
    async getProfile(userId: string): Promise<Profile> {
      return backend.loadProfile(userId);
    }

    @CircuitBreaker({
      strategy: 'errorRatio',
      threshold: 0.5,
      minRequestAmount: 4,
      retryTimeoutMs: 10_000,
      floodgate: fg,
      fallback: 'cachedRecommendations',
    })
    async getRecommendations(userId: string): Promise<Recommendations> {
      const items = await backend.recommendations(userId);
      this.lastGood.set(userId, items);
      return { items, source: 'live' };
    }

    /** The fallback: gets the same arguments, then the error (a business error or a block). */
    cachedRecommendations(userId: string, error: unknown): Recommendations {
      const items = this.lastGood.get(userId) ?? POPULAR;
      return { items, source: error instanceof CircuitOpenError ? 'cache (circuit open)' : 'cache' };
    }

    @RateLimit({ threshold: 5, floodgate: fg })
    search(query: string): readonly string[] {
      return backend.search(query);
    }
  }
  return new UserService();
}
