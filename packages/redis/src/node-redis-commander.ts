import type { RedisCommander, RedisSubscription, SubscriptionHandlers } from './redis-commander';
import { withTimeout } from './with-timeout';

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
    if (this.isReady()) return Promise.resolve();
    return new Promise((resolve) => this.client.once('ready', resolve));
  }

  async setAndPublish(key: string, channel: string, value: string): Promise<void> {
    const multi = this.client.multi();
    multi.set(key, value);
    multi.publish(channel, value);
    await multi.exec();
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
