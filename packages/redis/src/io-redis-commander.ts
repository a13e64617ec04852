import type { RedisCommander, RedisSubscription, SubscriptionHandlers } from './redis-commander';
import { withTimeout } from './with-timeout';

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
    if (this.isReady()) return Promise.resolve();
    return new Promise((resolve) => this.client.once('ready', resolve));
  }

  async setAndPublish(key: string, channel: string, value: string): Promise<void> {
    const multi = this.client.multi();
    multi.set(key, value);
    multi.publish(channel, value);
    checkExec(await multi.exec());
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
