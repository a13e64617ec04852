import type { ClusterBreakerView, ClusterCircuitState } from '@floodgate/core/cluster';
import type { RedisCommander, RedisSubscription } from './redis-commander';

/** A breaker's state by its number in the breaker script (0 closed, 1 open, 2 halfOpen). */
export const CIRCUIT_STATES: readonly ClusterCircuitState[] = ['closed', 'open', 'halfOpen'];

/** A shared breaker as the channel tells it what it hears. */
export interface ChannelMember {
  /** Its hash in Redis: the messages about it name it. */
  readonly key: string;
  /** A transition of its hash was published. */
  heard(view: ClusterBreakerView): void;
  /** Messages may have been missed: what it learned is stale. */
  stale(): void;
}

/**
 * The channel on which shared breakers' transitions are published (one per backend prefix), and
 * this backend's subscription to it: one dedicated connection, opened when the first shared
 * breaker is made, that tells every breaker of this backend the transitions of its hash, so
 * every instance learns of a transition as soon as it happens. When the subscription was lost
 * for a while, every breaker's state counts as stale (it is read again before the next call).
 * Messages only make learning faster: each answer to a breaker's own script call carries the
 * state too.
 */
export class BreakerChannel {
  private readonly breakers = new Map<string, Set<ChannelMember>>();
  private subscription: Promise<RedisSubscription | undefined> | undefined;
  private closed = false;

  constructor(
    private readonly commander: RedisCommander,
    /** The channel's name. */
    readonly name: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Routes the transitions of `breaker`'s hash to it; subscribes on first use. */
  add(breaker: ChannelMember): void {
    let set = this.breakers.get(breaker.key);
    if (set === undefined) this.breakers.set(breaker.key, (set = new Set()));
    set.add(breaker);
    this.start();
  }

  remove(breaker: ChannelMember): void {
    const set = this.breakers.get(breaker.key);
    set?.delete(breaker);
    if (set?.size === 0) this.breakers.delete(breaker.key);
  }

  /** Resolves once subscribed (or the subscription failed, which `onError` heard), if it was started. */
  async ready(): Promise<void> {
    await this.subscription;
  }

  /** Ends the subscription, waiting for Redis at most `timeoutMs`. Never rejects. */
  async close(timeoutMs: number): Promise<void> {
    this.closed = true;
    const subscription = await this.subscription;
    await subscription?.close(timeoutMs);
  }

  private start(): void {
    if (this.subscription !== undefined || this.closed) return;
    this.subscription = this.commander
      .subscribe(this.name, {
        onMessage: (message) => this.route(message),
        onReconnect: () => {
          for (const set of this.breakers.values()) for (const breaker of set) breaker.stale();
        },
        onError: (error) => this.onError(error),
      })
      .then(
        async (subscription) => {
          // Closed while subscribing: end it now.
          if (this.closed) await subscription.close(1000);
          return subscription;
        },
        (error: unknown) => {
          this.onError(error);
          // Retry at the next breaker made; meanwhile replies alone keep breakers informed.
          this.subscription = undefined;
          return undefined;
        },
      );
  }

  /** `ver|state|retryAfterMs|value|key` (the key last: it may contain `|`). */
  private route(message: string): void {
    const parts = message.split('|');
    if (parts.length < 5) return;
    const set = this.breakers.get(parts.slice(4).join('|'));
    const state = CIRCUIT_STATES[Number(parts[1])];
    if (set === undefined || state === undefined) return;
    const view: ClusterBreakerView = {
      version: Number(parts[0]),
      state,
      retryAfterMs: Number(parts[2]),
      value: parts[3] === '' ? undefined : Number(parts[3]),
    };
    for (const breaker of set) breaker.heard(view);
  }
}
