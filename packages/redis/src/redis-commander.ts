/** A dedicated subscriber connection, from {@link RedisCommander.subscribe}. */
export interface RedisSubscription {
  /**
   * Unsubscribes and closes the subscriber connection, waiting for Redis at most `timeoutMs`
   * (real time): past it, the connection is dropped at once. Never rejects.
   */
  close(timeoutMs: number): Promise<void>;
}

/** What {@link RedisCommander.subscribe} reports besides messages. */
export interface SubscriptionHandlers {
  /** A message published on the channel. */
  readonly onMessage: (message: string) => void;
  /**
   * The subscriber connection is back after a disconnect (it resubscribes on its own); messages
   * published meanwhile were lost, so the caller should re-read what it follows.
   */
  readonly onReconnect: () => void;
  /** The subscriber connection reported an error. */
  readonly onError: (error: unknown) => void;
}

/**
 * The few things Floodgate needs from a Redis client, so that ioredis, node-redis (v4/v5) or
 * any other client can serve. {@link toRedisCommander} makes one from an ioredis or node-redis
 * client; implement it yourself for another client.
 */
export interface RedisCommander {
  /** Sends one command (`['EVALSHA', sha, '1', key, ...]`) and resolves with its reply. */
  send(args: readonly string[]): Promise<unknown>;
  /** Whether the connection can take commands now; when not, cluster checks fall back at once. */
  isReady(): boolean;
  /** Resolves once the connection is ready. */
  whenReady(): Promise<void>;
  /** `MULTI; SET key value; PUBLISH channel value; EXEC`: both or neither. */
  setAndPublish(key: string, channel: string, value: string): Promise<void>;
  /**
   * Opens a dedicated connection (a duplicate of the client: a subscribed connection can run no
   * other command) subscribed to `channel`; resolves once the subscription is in place.
   */
  subscribe(channel: string, handlers: SubscriptionHandlers): Promise<RedisSubscription>;
}
