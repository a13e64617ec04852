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

/** A client {@link toRedisCommander} understands. */
export type RedisClientLike = RedisCommander | IoRedisLike | NodeRedisLike | object;

/**
 * The {@link RedisCommander} of an ioredis client (`new Redis()`, `new Redis.Cluster()`), a
 * node-redis client (`createClient()`, connected), or a commander given as is. For a Redis
 * Cluster use ioredis's `Redis.Cluster`: node-redis's cluster client (`createCluster()`) sends
 * commands with a different signature and is refused.
 * @throws TypeError when `client` is none of these, naming what to use instead.
 * @example
 * const commander = toRedisCommander(new Redis(process.env.REDIS_URL));
 */
export function toRedisCommander(client: RedisClientLike): RedisCommander {
  const c = client as Record<string, unknown>;
  if (typeof c.send === 'function' && typeof c.isReady === 'function' && typeof c.subscribe === 'function')
    return client as RedisCommander;
  if (typeof c.call === 'function' && typeof c.status === 'string') return new IoRedisCommander(client as IoRedisLike);
  if (typeof c.sendCommand === 'function' && 'isReady' in c) return new NodeRedisCommander(client as NodeRedisLike);
  if (typeof c.sendCommand === 'function' && 'masters' in c) {
    throw new TypeError(
      "client: node-redis's cluster client (createCluster()) is not supported; use ioredis's Redis.Cluster for a Redis Cluster, or implement RedisCommander",
    );
  }
  throw new TypeError('client must be an ioredis client, a node-redis client or a RedisCommander');
}

/** The parts of an ioredis client (`Redis` or `Cluster`) used here. */
export interface IoRedisLike {
  status: string;
  call(command: string, ...args: string[]): Promise<unknown>;
  multi(): {
    set(key: string, value: string): unknown;
    publish(channel: string, message: string): unknown;
    exec(): Promise<unknown>;
  };
  duplicate(): IoRedisLike;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: string, listener: (...args: never[]) => void): unknown;
  once(event: string, listener: () => void): unknown;
}

/** Resolves once a client (ioredis or node-redis) is ready: at once if it is, else on its `ready` event. */
function whenClientReady(ready: boolean, client: IoRedisLike | NodeRedisLike): Promise<void> {
  if (ready) return Promise.resolve();
  return new Promise((resolve) => client.once('ready', resolve));
}

/** `MULTI; SET key value; PUBLISH channel value; EXEC` on a client; resolves with `exec()`'s result. */
function setAndPublishOn(
  client: IoRedisLike | NodeRedisLike,
  key: string,
  channel: string,
  value: string,
): Promise<unknown> {
  const multi = client.multi();
  multi.set(key, value);
  multi.publish(channel, value);
  return multi.exec();
}

/** Throws the first error of an ioredis `exec()` result (`[[err, reply], ...]`). */
function checkExec(result: unknown): void {
  if (result === null) throw new Error('MULTI transaction was aborted');
  if (!Array.isArray(result)) return;
  for (const item of result) if (Array.isArray(item) && item[0] != null) throw item[0];
}

/** {@link RedisCommander} over an ioredis client. */
export class IoRedisCommander implements RedisCommander {
  constructor(private readonly client: IoRedisLike) {}

  send(args: readonly string[]): Promise<unknown> {
    return this.client.call(...(args as [string, ...string[]]));
  }

  isReady(): boolean {
    return this.client.status === 'ready';
  }

  whenReady(): Promise<void> {
    return whenClientReady(this.isReady(), this.client);
  }

  async setAndPublish(key: string, channel: string, value: string): Promise<void> {
    checkExec(await setAndPublishOn(this.client, key, channel, value));
  }

  async subscribe(channel: string, handlers: SubscriptionHandlers): Promise<RedisSubscription> {
    const sub = this.client.duplicate();
    let connectedOnce = false;
    sub.on('error', (error: never) => handlers.onError(error));
    sub.on('message', (from: never, message: never) => {
      if (from === channel) handlers.onMessage(message);
    });
    sub.on('ready', () => {
      if (connectedOnce) handlers.onReconnect();
      connectedOnce = true;
    });
    try {
      await sub.subscribe(channel);
    } catch (error) {
      sub.disconnect();
      throw error;
    }
    connectedOnce = true;
    return {
      async close(timeoutMs: number) {
        const graceful = (async () => {
          await sub.unsubscribe(channel);
          await sub.quit();
        })();
        try {
          await withTimeout(graceful, timeoutMs, () => new Error('unsubscribe timed out'));
        } catch {
          sub.disconnect();
        }
      },
    };
  }
}

/** The parts of a node-redis (`redis` v4/v5) client used here. */
export interface NodeRedisLike {
  readonly isReady: boolean;
  readonly isOpen: boolean;
  sendCommand(args: readonly string[]): Promise<unknown>;
  multi(): {
    set(key: string, value: string): unknown;
    publish(channel: string, message: string): unknown;
    exec(): Promise<unknown>;
  };
  duplicate(): NodeRedisLike;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  /** v5: drops the connection at once. */
  destroy?(): void;
  /** v4: drops the connection at once. */
  disconnect?(): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  once(event: string, listener: () => void): unknown;
}

/** {@link RedisCommander} over a node-redis client. */
export class NodeRedisCommander implements RedisCommander {
  constructor(private readonly client: NodeRedisLike) {}

  send(args: readonly string[]): Promise<unknown> {
    return this.client.sendCommand(args);
  }

  isReady(): boolean {
    return this.client.isReady;
  }

  whenReady(): Promise<void> {
    return whenClientReady(this.isReady(), this.client);
  }

  async setAndPublish(key: string, channel: string, value: string): Promise<void> {
    await setAndPublishOn(this.client, key, channel, value);
  }

  async subscribe(channel: string, handlers: SubscriptionHandlers): Promise<RedisSubscription> {
    const sub = this.client.duplicate();
    let connectedOnce = false;
    sub.on('error', (error: never) => handlers.onError(error));
    sub.on('ready', () => {
      if (connectedOnce) handlers.onReconnect();
    });
    try {
      await sub.connect();
      await sub.subscribe(channel, (message) => handlers.onMessage(message));
    } catch (error) {
      await closeNodeRedis(sub);
      throw error;
    }
    connectedOnce = true;
    return {
      async close(timeoutMs: number) {
        const graceful = (async () => {
          try {
            if (sub.isReady) await sub.unsubscribe(channel);
          } finally {
            await closeNodeRedis(sub);
          }
        })();
        try {
          await withTimeout(graceful, timeoutMs, () => new Error('unsubscribe timed out'));
        } catch {
          dropNodeRedis(sub);
        }
      },
    };
  }
}

async function closeNodeRedis(client: NodeRedisLike): Promise<void> {
  if (!client.isOpen) return;
  try {
    if (typeof client.close === 'function') await client.close();
    else await client.quit?.();
  } catch {
    // already closing or closed
  }
}

/** Drops a node-redis connection at once, without waiting for Redis. */
function dropNodeRedis(client: NodeRedisLike): void {
  try {
    if (typeof client.destroy === 'function') client.destroy();
    else void client.disconnect?.().catch(() => undefined);
  } catch {
    // already closed
  }
}

/**
 * `promise`, or a rejection with `onTimeout()`'s error once `ms` (real time) have passed first.
 * The timer is unref'd and cleared when `promise` settles; a late rejection of `promise` is
 * handled (never unhandled).
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
