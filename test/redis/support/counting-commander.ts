import { toRedisCommander, type RedisCommander } from '@floodgate/redis';

/** A real commander that also counts the commands sent through it, by name. */
export interface CountingCommander extends RedisCommander {
  readonly sent: Map<string, number>;
  total(): number;
}

/** Wraps a real client's commander (no mock: every command reaches Redis) to count commands. */
export function countingCommander(client: object): CountingCommander {
  const inner = toRedisCommander(client);
  const sent = new Map<string, number>();
  return {
    sent,
    total: () => [...sent.values()].reduce((a, b) => a + b, 0),
    send(args) {
      sent.set(args[0]!, (sent.get(args[0]!) ?? 0) + 1);
      return inner.send(args);
    },
    isReady: () => inner.isReady(),
    whenReady: () => inner.whenReady(),
    setAndPublish: (key, channel, value) => inner.setAndPublish(key, channel, value),
    subscribe: (channel, handlers) => inner.subscribe(channel, handlers),
  };
}
