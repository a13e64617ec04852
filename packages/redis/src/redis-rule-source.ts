import {
  floodgate as defaultFloodgate,
  parseRulesJson,
  ruleSetJson,
  type Floodgate,
  type RuleSetOptions,
  type RuleValidationError,
} from '@floodgate/core';
import { toRedisCommander, type RedisClientLike, type RedisCommander, type RedisSubscription } from './redis-commander';

/** Options of {@link redisRuleSource}. */
export interface RedisRuleSourceOptions {
  /**
   * An ioredis or node-redis client (or a {@link RedisCommander}). It reads the key; a
   * duplicate of it subscribes to the channel (a subscribed connection can run nothing else).
   */
  readonly client: RedisClientLike;
  /** The key holding the rule set, as JSON (`{ "flow": [...], "circuitBreakers": [...] }`). */
  readonly key: string;
  /** The channel on which every new rule set is published (the JSON itself). */
  readonly channel: string;
  /** The engine the rules are loaded into. @defaultValue the shared `floodgate` */
  readonly floodgate?: Floodgate;
  /**
   * Told about every rule set that could not be loaded (not JSON, or failing validation; the
   * engine also reports both as `rulesRejected` with source `'redis'`) and about subscriber
   * connection errors.
   * @defaultValue `process.emitWarning`
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Longest wait of {@link RedisRuleSource.close} for Redis to end the subscription, in real ms;
   * past it the subscriber connection is dropped at once. @defaultValue 1000
   */
  readonly closeTimeoutMs?: number;
}

/** Defaults of the {@link RedisRuleSourceOptions}. */
export const REDIS_RULE_SOURCE_DEFAULTS = Object.freeze({
  /** Longest wait of `close()` for UNSUBSCRIBE and QUIT before dropping the connection. */
  closeTimeoutMs: 1000,
});

/**
 * Rules loaded from Redis (Sentinel's Redis datasource): the rule set in a key, read at start,
 * and every update published on a channel applied as it comes. Each rule set replaces the kinds
 * it contains (`{ "flow": [] }` removes every loaded flow rule; a kind left out is left alone),
 * loaded with source `'redis'` (see `describeRules()`).
 * A rule set that fails validation is rejected whole and the rules in force stay. After the
 * subscriber reconnects, the key is read again, since updates published meanwhile were lost.
 */
export class RedisRuleSource {
  private subscription: RedisSubscription | undefined;
  private lastApplied: string | undefined;
  /** Messages received, to tell whether the key read at start is already out of date. */
  private received = 0;
  private closed = false;

  /** @internal Use {@link redisRuleSource}. */
  constructor(
    private readonly commander: RedisCommander,
    private readonly options: RedisRuleSourceOptions,
    private readonly engine: Floodgate,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** @internal Subscribes, then reads the key (in this order, so no update falls in between). */
  async start(): Promise<void> {
    this.subscription = await this.commander.subscribe(this.options.channel, {
      onMessage: (message) => {
        this.received++;
        this.apply(message);
      },
      onReconnect: () => void this.reload(),
      onError: (error) => this.onError(error),
    });
    await this.reload();
  }

  /**
   * Reads the key and applies it, unless an update arrived meanwhile (the update is as new as
   * the key or newer).
   */
  async reload(): Promise<void> {
    const before = this.received;
    let value: unknown;
    try {
      value = await this.commander.send(['GET', this.options.key]);
    } catch (error) {
      this.onError(error);
      return;
    }
    if (this.received !== before || value === null || value === undefined) return;
    this.apply(
      typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : JSON.stringify(value),
    );
  }

  /**
   * Stops following the channel and closes the subscriber connection, within `closeTimeoutMs`
   * even while Redis is frozen; the rules stay loaded. Never rejects.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.subscription?.close(this.options.closeTimeoutMs ?? REDIS_RULE_SOURCE_DEFAULTS.closeTimeoutMs);
  }

  /** Applies one rule set, judged as it is, or rejects it whole (the rules in force stay). */
  private apply(text: string): void {
    if (this.closed || text === this.lastApplied) return;
    let rules: unknown;
    try {
      rules = parseRulesJson(text, `Rules from Redis key "${this.options.key}" rejected`);
    } catch (error) {
      this.engine.reportRejectedRules(error as RuleValidationError, { source: 'redis' });
      this.onError(error);
      return;
    }
    try {
      this.engine.loadRules(rules as RuleSetOptions, { source: 'redis' });
      this.lastApplied = text;
    } catch (error) {
      this.onError(error);
    }
  }
}

/**
 * Loads rules from a Redis key at start and applies every update published on a channel.
 * Resolves once subscribed and the key is loaded. Publish updates with {@link publishRules}.
 * @throws TypeError when `key` or `channel` is missing, or `client` is not a Redis client;
 * RangeError when `closeTimeoutMs` is not a finite number > 0;
 * rejects when the first subscription or read fails.
 * @example
 * const source = await redisRuleSource({ client: redis, key: 'shop:rules', channel: 'shop:rules', floodgate: fg });
 * fg.on('rulesRejected', ({ issues }) => log.error({ issues }, 'rules from Redis rejected'));
 * // ... on shutdown:
 * await source.close();
 */
export async function redisRuleSource(options: RedisRuleSourceOptions): Promise<RedisRuleSource> {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('redisRuleSource(options): options must be an object');
  for (const field of ['key', 'channel'] as const) {
    if (typeof options[field] !== 'string' || options[field] === '') {
      throw new TypeError(
        `redisRuleSource(options): ${field} must be a non-empty string, got ${JSON.stringify(options[field])}`,
      );
    }
  }
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new TypeError('redisRuleSource(options): onError must be a function');
  const closeTimeoutMs = options.closeTimeoutMs;
  if (
    closeTimeoutMs !== undefined &&
    (typeof closeTimeoutMs !== 'number' || !Number.isFinite(closeTimeoutMs) || closeTimeoutMs <= 0)
  ) {
    throw new RangeError(
      `redisRuleSource(options): closeTimeoutMs must be a finite number > 0, got ${String(closeTimeoutMs)}`,
    );
  }
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.emitWarning(`Floodgate Redis rule source: ${String(error)}`, { code: 'FLOODGATE_RULE_SOURCE' }));
  const source = new RedisRuleSource(
    toRedisCommander(options.client),
    options,
    options.floodgate ?? defaultFloodgate,
    onError,
  );
  await source.start();
  return source;
}

/** Where {@link publishRules} writes: the key and channel a {@link redisRuleSource} follows. */
export interface PublishRulesTarget {
  readonly key: string;
  readonly channel: string;
}

/**
 * Stores a rule set in `key` and publishes it on `channel` in one transaction
 * (`MULTI; SET; PUBLISH; EXEC`, as Sentinel's Redis datasource asks of writers), so every
 * {@link redisRuleSource} applies it and instances starting later read it. Validates first, and
 * validates exactly what is published: the JSON text, read back (`ruleSetJson` from
 * `@floodgate/core`). What JSON cannot carry (fields inherited from a prototype, `undefined`,
 * functions, `NaN` written as `null`, a `toJSON()`'s rewrite) is therefore judged as every
 * subscriber will see it, and an invalid rule set is never published.
 * @throws RuleValidationError listing every problem of the rule set as published, or naming why
 * it cannot be written as JSON (a cycle, a BigInt), before anything is written.
 * @example
 * await publishRules(redis, { key: 'shop:rules', channel: 'shop:rules' }, { flow: [{ resource: 'checkout', threshold: 50 }] });
 */
export async function publishRules(
  client: RedisClientLike,
  target: PublishRulesTarget,
  rules: RuleSetOptions,
): Promise<void> {
  const json = ruleSetJson(rules, undefined, 'Rules not published');
  await toRedisCommander(client).setAndPublish(target.key, target.channel, json);
}
