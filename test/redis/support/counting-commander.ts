import { toRedisCommander, type RedisCommander } from '@floodgate/redis';

/** A real commander that also counts the commands sent through it, by name. */
export interface CountingCommander extends RedisCommander {
  readonly sent: Map<string, number>;
  total(): number;
  /** Commands sent and not answered yet. */
  pending(): number;
}

/** Wraps a real client's commander (no mock: every command reaches Redis) to count commands. */
export function countingCommander(client: object): CountingCommander {
  const inner = toRedisCommander(client);
  const sent = new Map<string, number>();
  let pending = 0;
  return {
    sent,
    total: () => [...sent.values()].reduce((a, b) => a + b, 0),
    pending: () => pending,
    send(args) {
      sent.set(args[0]!, (sent.get(args[0]!) ?? 0) + 1);
      pending++;
      const reply = inner.send(args);
      const done = (): void => void pending--;
      reply.then(done, done);
      return reply;
    },
    isReady: () => inner.isReady(),
    whenReady: () => inner.whenReady(),
    setAndPublish: (key, channel, value) => inner.setAndPublish(key, channel, value),
    subscribe: (channel, handlers) => inner.subscribe(channel, handlers),
  };
}
