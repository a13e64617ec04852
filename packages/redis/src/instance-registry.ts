import type { RedisCommander } from './redis-commander';
import { LUA_PRELUDE, RedisScript } from './redis-script';

/**
 * The live instances, for `'perInstance'` rules: each instance's heartbeat scores it in a
 * sorted set with its time, instances silent for longer than the TTL are pruned, and the count
 * is cached here, so checks read a number and never wait for it. Heartbeats run on one unref'd
 * interval per backend, started by the first `'perInstance'` rule; the count therefore lags a
 * joining or leaving instance by up to one interval (plus the TTL for one that died).
 */
export class InstanceRegistry {
  private live = 1;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private started = false;

  constructor(
    private readonly commander: RedisCommander,
    private readonly key: string,
    /** This instance's id in the set. */
    readonly id: string,
    private readonly ttlMs: number,
    private readonly intervalMs: number,
    private readonly sharedNow: () => string,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The live instances at the last heartbeat (this one included; 1 before any). */
  get count(): number {
    return this.live;
  }

  /** Starts the heartbeats, with one at once; idempotent. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.timer = setInterval(() => void this.beat().catch(this.onError), this.intervalMs);
    this.timer.unref();
    void this.beat().catch(this.onError);
  }

  /** Sends a heartbeat now; resolves with the live instances. Skipped while not connected. */
  async beat(): Promise<number> {
    if (this.closed || !this.commander.isReady()) return this.live;
    const reply = await HEARTBEAT_SCRIPT.run(
      this.commander,
      [this.key],
      [this.sharedNow(), this.id, String(this.ttlMs)],
    );
    const count = Number(reply);
    if (!this.closed && count >= 1) this.live = count;
    return this.live;
  }

  /** Stops the heartbeats and removes this instance from the set. */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.started && this.commander.isReady()) await this.commander.send(['ZREM', this.key, this.id]);
  }
}

/**
 * Registers an instance as live and counts the live ones: a sorted set scored by each
 * instance's last heartbeat, pruned of those silent for longer than the TTL.
 *
 * KEYS[1] the set. ARGV: now, instance id, ttlMs. Replies the number of live instances.
 */
export const HEARTBEAT_SCRIPT = new RedisScript(
  'heartbeat',
  `${LUA_PRELUDE}
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], fmt(now), ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. fmt(now - ttl))
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * ttl))
return redis.call('ZCARD', KEYS[1])
`,
);
