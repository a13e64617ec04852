import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type {
  ClusterBackend,
  ClusterBreaker,
  ClusterBreakerSpec,
  ClusterLimiter,
  ClusterLimiterSpec,
  ClusterThresholdType,
} from '@floodgate/core/cluster';
import { BreakerChannel } from './breaker-channel';
import { DeadlineQueue } from './deadline-queue';
import { HEARTBEAT_SCRIPT, InstanceRegistry } from './instance-registry';
import type { LimiterContext } from './limiter-context';
import { PaceLimiter } from './pace-limiter';
import { toRedisCommander, withTimeout, type RedisClientLike, type RedisCommander } from './redis-commander';
import { PACE_SCRIPT } from './scripts/pace-script';
import { TOKEN_BUCKET_RELEASE_SCRIPT, TOKEN_BUCKET_SCRIPT } from './scripts/token-bucket-script';
import { WINDOW_RELEASE_SCRIPT, WINDOW_SCRIPT } from './scripts/window-script';
import { BREAKER_SCRIPT } from './scripts/breaker-script';
import { RedisBreaker } from './shared-breaker';
import { checkServerVersion, RedisVersionError } from './server-version';
import { BackendBreaker, StoreGate } from './store-gate';
import { TokenBucketLimiter } from './token-bucket-limiter';
import { WindowLimiter } from './window-limiter';

/** Defaults of the {@link RedisClusterOptions}. */
export const REDIS_CLUSTER_DEFAULTS = Object.freeze({
  /** Prepended to every key (`floodgate:w:...`), so Floodgate's keys are easy to find. */
  prefix: 'floodgate',
  /** Longest wait for the store per check, as Sentinel's cluster client request timeout. */
  timeoutMs: 20,
  /** Longest wait of `ready()`: connection, version check and script loading. */
  readyTimeoutMs: 5000,
  /** Longest wait of `close()` for Redis to take the instance off the live ones. */
  closeTimeoutMs: 1000,
  /** Failures in a row (timeouts, errors, connection not ready) that declare the store down. */
  failureThreshold: 3,
  /** How long checks skip a store declared down before one call probes it again. */
  coolDownMs: 1000,
  /** How often this instance says it is live, for `'perInstance'` rules. */
  heartbeatIntervalMs: 1000,
  /** How long an instance counts as live after its last heartbeat (three missed beats). */
  instanceTtlMs: 3000,
  /**
   * How long an instance decides a shared breaker's calls from the state it last learned without
   * hearing from Redis again (transitions are published at once meanwhile).
   */
  breakerRefreshMs: 1000,
});

const SCRIPTS = [
  WINDOW_SCRIPT,
  WINDOW_RELEASE_SCRIPT,
  PACE_SCRIPT,
  TOKEN_BUCKET_SCRIPT,
  TOKEN_BUCKET_RELEASE_SCRIPT,
  BREAKER_SCRIPT,
  HEARTBEAT_SCRIPT,
];

/** Options of {@link redisCluster}. */
export interface RedisClusterOptions {
  /**
   * An ioredis client (`new Redis(url)`), a connected node-redis client (`createClient()`), or
   * a {@link RedisCommander}. Floodgate sends its commands on it and never closes it.
   */
  readonly client: RedisClientLike;
  /**
   * Prepended to every key. Braces are refused: Floodgate adds its own Redis Cluster hash tags.
   * @defaultValue 'floodgate'
   */
  readonly prefix?: string;
  /**
   * Longest wait for Redis per check, in real ms; past it the check falls back (to the local
   * rule, or lets the call pass). Checks of one rule made in one tick share one script call, so
   * a check waits at most this plus the tick it was made in. @defaultValue 20
   */
  readonly timeoutMs?: number;
  /**
   * Longest wait of {@link RedisClusterBackend.ready}, in real ms: past it, `ready()` rejects
   * (checks meanwhile fall back until the connection is ready). @defaultValue 5000
   */
  readonly readyTimeoutMs?: number;
  /**
   * Longest wait of {@link RedisClusterBackend.close}, in real ms, for Redis to take this
   * instance off the live ones; past it, `close()` resolves anyway and the instance leaves them
   * when its heartbeat expires (`instanceTtlMs`). @defaultValue 1000
   */
  readonly closeTimeoutMs?: number;
  /** Failures in a row that declare Redis down: checks then stop asking it. @defaultValue 3 */
  readonly failureThreshold?: number;
  /** How long checks skip Redis once declared down, before one call probes it. @defaultValue 1000 */
  readonly coolDownMs?: number;
  /** How often this instance heartbeats, for `'perInstance'` rules. @defaultValue 1000 */
  readonly heartbeatIntervalMs?: number;
  /** How long an instance counts as live after its last heartbeat. @defaultValue 3000 */
  readonly instanceTtlMs?: number;
  /**
   * How long an instance decides the calls of a shared circuit breaker (`cluster: true`) from
   * the state it last learned, without hearing from Redis (on the local clock: `now`, or
   * `performance.now()`); past it, the next call asks Redis first (one read per breaker, shared
   * by the calls of that tick). Transitions are published and reach every instance at once
   * meanwhile; this bounds how stale an instance can be when a message is lost. Calls that
   * complete keep it fresh: their reports are answered with the state. @defaultValue 1000
   */
  readonly breakerRefreshMs?: number;
  /**
   * The time windows, pacing and shared breakers' deadlines are computed in, in ms: it must be
   * the same scale in every instance (so not `performance.now()`). Also drives the cool-down of
   * the backend's own breaker on Redis, leased tokens' expiry and `breakerRefreshMs`.
   * @defaultValue Redis's own clock (`TIME` inside each script), so instances need no
   * synchronised clocks; the cool-down, leases and `breakerRefreshMs` then use `performance.now()`.
   */
  readonly now?: () => number;
  /** This instance's id among the live instances. @defaultValue `<hostname>:<pid>:<random>` */
  readonly instanceId?: string;
  /**
   * Background failures: heartbeats, the version check at connect, a `close()` that Redis did not
   * answer in time. @defaultValue `process.emitWarning`
   */
  readonly onError?: (error: unknown) => void;
}

const OPTION_KEYS = [
  'client',
  'prefix',
  'timeoutMs',
  'readyTimeoutMs',
  'closeTimeoutMs',
  'failureThreshold',
  'coolDownMs',
  'heartbeatIntervalMs',
  'instanceTtlMs',
  'breakerRefreshMs',
  'now',
  'instanceId',
  'onError',
];

/**
 * Floodgate's cluster backend on Redis: give it to the engine as `cluster`, and rules with a
 * `cluster` field take their decisions from Redis, one atomic script call per check (or per
 * leased batch), so a limit holds across every process; circuit breaker rules with
 * `cluster: true` share one breaker through it.
 */
export class RedisClusterBackend implements ClusterBackend {
  readonly name = 'redis';
  /** The commands' way to Redis. */
  readonly commander: RedisCommander;
  private readonly storeBreaker: BackendBreaker;
  private readonly gate: StoreGate;
  private readonly registry: InstanceRegistry;
  private readonly ctx: LimiterContext;
  private readonly channel: BreakerChannel;
  private readonly breakerRefreshMs: number;
  private readonly readyTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly onError: (error: unknown) => void;
  /** The connection check in progress or done (cleared when it failed for a reason that may pass). */
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** @internal Use {@link redisCluster}. */
  constructor(options: RedisClusterOptions) {
    const o = validate(options);
    this.commander = toRedisCommander(o.client);
    const shared = o.now;
    const sharedNow = shared === undefined ? () => '' : () => String(shared());
    const localNow = shared ?? (() => performance.now());
    this.storeBreaker = new BackendBreaker(o.failureThreshold, o.coolDownMs);
    const onError =
      o.onError ??
      ((error: unknown) =>
        process.emitWarning(`Floodgate Redis backend: ${String(error)}`, { code: 'FLOODGATE_REDIS' }));
    this.onError = onError;
    this.readyTimeoutMs = o.readyTimeoutMs;
    this.closeTimeoutMs = o.closeTimeoutMs;
    this.breakerRefreshMs = o.breakerRefreshMs;
    this.channel = new BreakerChannel(this.commander, `${o.prefix}:breakers`, onError);
    this.registry = new InstanceRegistry(
      this.commander,
      `${o.prefix}:instances`,
      o.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      o.instanceTtlMs,
      o.heartbeatIntervalMs,
      sharedNow,
      onError,
    );
    const registry = this.registry;
    this.gate = new StoreGate(this.commander, this.storeBreaker, new DeadlineQueue(), o.timeoutMs, localNow);
    this.ctx = {
      gate: this.gate,
      prefix: o.prefix,
      sharedNow,
      localNow,
      // At most 2^53 − 1, as every threshold a rule loads with: counts in the store stay exact.
      effectiveThreshold: (threshold: number, type: ClusterThresholdType) =>
        type === 'perInstance' ? Math.min(threshold * registry.count, Number.MAX_SAFE_INTEGER) : threshold,
    };
    // Check the server as soon as the connection is up, whether or not ready() is awaited.
    this.connect().catch((error: unknown) => {
      if (error instanceof RedisVersionError) onError(error);
    });
  }

  /** This instance's id among the live instances. */
  get instanceId(): string {
    return this.registry.id;
  }

  /** The live instances at the last heartbeat (1 before any, or with no `'perInstance'` rule). */
  get liveInstances(): number {
    return this.registry.count;
  }

  /** Whether Redis is declared down (its breaker open): checks fall back without asking it. */
  get isDown(): boolean {
    return this.storeBreaker.isDown;
  }

  limiter(spec: ClusterLimiterSpec): ClusterLimiter {
    if (spec.thresholdType === 'perInstance') this.registry.start();
    switch (spec.kind) {
      case 'window':
        return new WindowLimiter(spec, this.ctx);
      case 'pace':
        return new PaceLimiter(spec, this.ctx);
      case 'tokenBucket':
        return new TokenBucketLimiter(spec, this.ctx);
    }
  }

  /**
   * A shared circuit breaker: its window and state in one Redis hash per rule
   * (`<prefix>:b:{<rule key>}`), its transitions published on `<prefix>:breakers`, to which this
   * backend subscribes (one more connection, a duplicate of the client) when its first shared
   * breaker is made.
   */
  breaker(spec: ClusterBreakerSpec): ClusterBreaker {
    return new RedisBreaker(
      spec,
      this.ctx,
      this.channel,
      this.breakerRefreshMs,
      `${this.registry.id}:${randomUUID().slice(0, 8)}:`,
    );
  }

  /**
   * Resolves once the connection is ready, the server is checked (Redis >= 5.0) and the scripts
   * are loaded, so the first checks neither fall back nor send a script in full; and, once a
   * shared breaker exists, once its channel is subscribed (call it again after loading such
   * rules to be sure every transition reaches this instance). Optional: without it, checks made
   * before the connection is ready fall back to the local rule.
   * @throws RedisVersionError when the server is older than Redis 5.0 (every check then falls
   * back, with reason `'error'`); Error when not done within `readyTimeoutMs`.
   */
  ready(): Promise<void> {
    const ready = this.connect().then(() => this.channel.ready());
    return withTimeout(ready, this.readyTimeoutMs, () => {
      const state = this.commander.isReady()
        ? 'connected, but INFO or SCRIPT LOAD did not answer'
        : 'the connection is not ready';
      return new Error(`redisCluster: Redis not ready within readyTimeoutMs (${this.readyTimeoutMs} ms): ${state}`);
    });
  }

  /** Waits for the connection, checks the server's version and loads the scripts; once. */
  private connect(): Promise<void> {
    if (this.connecting === undefined) {
      const attempt = (async () => {
        await this.commander.whenReady();
        try {
          await checkServerVersion(this.commander);
        } catch (error) {
          if (error instanceof RedisVersionError) this.gate.refuse(error);
          throw error;
        }
        await Promise.all(SCRIPTS.map((script) => script.load(this.commander)));
      })();
      this.connecting = attempt;
      attempt.catch((error: unknown) => {
        // A timeout or a lost connection may pass: the next ready() tries again.
        if (!(error instanceof RedisVersionError) && this.connecting === attempt) this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  /**
   * Sends this instance's heartbeat now and resolves with the live instances (`'perInstance'`
   * thresholds are multiplied by it). Heartbeats also run on their own once a `'perInstance'`
   * rule is loaded.
   */
  heartbeat(): Promise<number> {
    return this.registry.beat();
  }

  /**
   * Stops the heartbeats, makes pending and later checks fall back (reason `'notReady'`), ends
   * the shared breakers' subscription, and removes this instance from the live ones, waiting for
   * Redis at most `closeTimeoutMs`: it resolves then even while Redis is frozen (the instance
   * leaves the live ones when its heartbeat expires; `onError` is told). Never rejects; calling
   * it again returns the same promise. The client stays open: it is the caller's.
   */
  close(): Promise<void> {
    if (this.closing === undefined) {
      this.gate.close();
      const stopping = Promise.all([this.registry.stop(), this.channel.close(this.closeTimeoutMs)]).then(
        () => undefined,
      );
      this.closing = withTimeout(
        stopping,
        this.closeTimeoutMs,
        () => new Error(`redisCluster: close() did not reach Redis within closeTimeoutMs (${this.closeTimeoutMs} ms)`),
      ).catch((error: unknown) => this.onError(error));
    }
    return this.closing;
  }
}

/**
 * A cluster backend on Redis, for `new Floodgate({ cluster })`.
 * @throws RangeError or TypeError on a bad option, naming it and the value.
 * @example
 * import Redis from 'ioredis';
 * const cluster = redisCluster({ client: new Redis(process.env.REDIS_URL), prefix: 'shop' });
 * const fg = new Floodgate({ cluster });
 * fg.loadRules({ flow: [{ resource: 'checkout', threshold: 100, cluster: { thresholdType: 'global' } }] });
 * await fg.run('checkout', () => checkout(cart)); // at most 100/s across every process
 */
export function redisCluster(options: RedisClusterOptions): RedisClusterBackend {
  return new RedisClusterBackend(options);
}

interface ResolvedOptions extends Required<Omit<RedisClusterOptions, 'now' | 'instanceId' | 'onError'>> {
  readonly now: (() => number) | undefined;
  readonly instanceId: string | undefined;
  readonly onError: ((error: unknown) => void) | undefined;
}

function validate(options: RedisClusterOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`redisCluster(options): options must be an object, got ${String(options)}`);
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key))
      throw new TypeError(`redisCluster(options): unknown option "${key}" (allowed: ${OPTION_KEYS.join(', ')})`);
  }
  if (options.client === undefined || options.client === null)
    throw new TypeError('redisCluster(options): client is required (an ioredis or node-redis client)');
  const prefix = options.prefix ?? REDIS_CLUSTER_DEFAULTS.prefix;
  if (typeof prefix !== 'string' || prefix.length === 0)
    throw new TypeError(`redisCluster(options): prefix must be a non-empty string, got ${JSON.stringify(prefix)}`);
  if (/[{}]/.test(prefix))
    throw new TypeError(
      `redisCluster(options): prefix must not contain { or } (Floodgate adds its own Redis Cluster hash tags), got ${JSON.stringify(prefix)}`,
    );
  for (const fn of ['now', 'onError'] as const) {
    if (options[fn] !== undefined && typeof options[fn] !== 'function')
      throw new TypeError(`redisCluster(options): ${fn} must be a function`);
  }
  if (options.instanceId !== undefined && (typeof options.instanceId !== 'string' || options.instanceId === '')) {
    throw new TypeError(
      `redisCluster(options): instanceId must be a non-empty string, got ${JSON.stringify(options.instanceId)}`,
    );
  }
  return {
    client: options.client,
    prefix,
    timeoutMs: positive(options, 'timeoutMs', REDIS_CLUSTER_DEFAULTS.timeoutMs),
    readyTimeoutMs: positive(options, 'readyTimeoutMs', REDIS_CLUSTER_DEFAULTS.readyTimeoutMs),
    closeTimeoutMs: positive(options, 'closeTimeoutMs', REDIS_CLUSTER_DEFAULTS.closeTimeoutMs),
    failureThreshold: positive(options, 'failureThreshold', REDIS_CLUSTER_DEFAULTS.failureThreshold, true),
    coolDownMs: positive(options, 'coolDownMs', REDIS_CLUSTER_DEFAULTS.coolDownMs),
    heartbeatIntervalMs: positive(options, 'heartbeatIntervalMs', REDIS_CLUSTER_DEFAULTS.heartbeatIntervalMs),
    instanceTtlMs: positive(options, 'instanceTtlMs', REDIS_CLUSTER_DEFAULTS.instanceTtlMs),
    breakerRefreshMs: positive(options, 'breakerRefreshMs', REDIS_CLUSTER_DEFAULTS.breakerRefreshMs),
    now: options.now,
    instanceId: options.instanceId,
    onError: options.onError,
  };
}

function positive(
  options: RedisClusterOptions,
  key: keyof RedisClusterOptions,
  fallback: number,
  integer = false,
): number {
  const value = options[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `redisCluster(options): ${key} must be ${integer ? 'an integer' : 'a finite number'} > 0, got ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
    );
  }
  return value;
}
