import { floodgate as defaultFloodgate, RuleValidationError, type Floodgate, type RuleIssue } from '@floodgate/core';
import { parseRulesJson, ruleSetJson, type RuleSetOptions } from '@floodgate/core/rules';
import { sentinelFormat, type SentinelFormat, type SentinelRuleType } from '@floodgate/core/sentinel';
import { toRedisCommander, type RedisClientLike, type RedisCommander, type RedisSubscription } from './redis-commander';

/** Where {@link publishRules} writes: the key and channel a {@link redisRuleSource} follows. */
export interface PublishRulesTarget {
  readonly key: string;
  readonly channel: string;
}

/**
 * Where Sentinel's Redis data sources keep each rule type: a key holding the list as JSON, and
 * the channel every new list is published on (`{ flow: { key: 'shop-flow-rules', channel:
 * 'shop-flow-rules' } }`).
 */
export type SentinelRedisTargets = { readonly [T in SentinelRuleType]?: PublishRulesTarget };

/** Floodgate's rule set in one key (the default format). */
export interface FloodgateRedisRules {
  /** The key holding the rule set, as JSON (`{ "flow": [...], "circuitBreakers": [...] }`). */
  readonly key: string;
  /** The channel on which every new rule set is published (the JSON itself). */
  readonly channel: string;
  /** @defaultValue 'floodgate' */
  readonly format?: 'floodgate';
}

/**
 * Sentinel's rule JSON, one key and channel per Sentinel rule type, as Sentinel's Redis data
 * source keeps them (`RedisDataSource`: `GET` the key, then follow the channel).
 */
export interface SentinelRedisRules {
  /** `'sentinel'` for Sentinel's (Java) JSON, `'sentinel-golang'` for sentinel-golang's. */
  readonly format: 'sentinel' | 'sentinel-golang';
  /** Each rule type's key and channel. */
  readonly keys: SentinelRedisTargets;
}

/** Options of {@link redisRuleSource}: the client, and where and how the rules are kept. */
export type RedisRuleSourceOptions = RedisRuleSourceCommonOptions & (FloodgateRedisRules | SentinelRedisRules);

/** Options of {@link redisRuleSource} whatever the format. */
export interface RedisRuleSourceCommonOptions {
  /**
   * An ioredis or node-redis client (or a {@link RedisCommander}). It reads the keys; a
   * duplicate of it subscribes to each channel (a subscribed connection can run nothing else).
   */
  readonly client: RedisClientLike;
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

/** One followed key: the Sentinel type it holds (none for Floodgate's format), its last text. */
interface FollowedKey {
  readonly type: SentinelRuleType | undefined;
  readonly key: string;
  readonly channel: string;
  text: string | undefined;
  /** Messages received, to tell whether a key read is already out of date. */
  received: number;
  subscription?: RedisSubscription;
}

/**
 * Rules loaded from Redis (Sentinel's Redis datasource): the rule set in a key, read at start,
 * and every update published on a channel applied as it comes. Each rule set replaces the kinds
 * it contains (`{ "flow": [] }` removes every loaded flow rule; a kind left out is left alone),
 * loaded with source `'redis'` (see `describeRules()`).
 * A rule set that fails validation is rejected whole and the rules in force stay. After the
 * subscriber reconnects, the key is read again, since updates published meanwhile were lost.
 *
 * In Sentinel's format the source follows a key and channel per Sentinel rule type, and a
 * version is the lists together: an update of any is read with the others' last lists,
 * converted (`fromSentinelRules`) and applied or rejected whole; a key that is absent adds
 * nothing.
 */
export class RedisRuleSource {
  private readonly followed: readonly FollowedKey[];
  private lastApplied: string | undefined;
  private closed = false;

  /** @internal Use {@link redisRuleSource}. */
  constructor(
    private readonly commander: RedisCommander,
    private readonly options: RedisRuleSourceOptions,
    private readonly format: SentinelFormat | undefined,
    private readonly engine: Floodgate,
    private readonly onError: (error: unknown) => void,
  ) {
    const targets: [SentinelRuleType | undefined, PublishRulesTarget][] =
      'keys' in options
        ? (Object.entries(options.keys) as [SentinelRuleType, PublishRulesTarget][])
        : [[undefined, options]];
    this.followed = targets.map(([type, { key, channel }]) => ({ type, key, channel, text: undefined, received: 0 }));
  }

  /** @internal Subscribes, then reads the keys (in this order, so no update falls in between). */
  async start(): Promise<void> {
    try {
      for (const followed of this.followed) {
        followed.subscription = await this.commander.subscribe(followed.channel, {
          onMessage: (message) => {
            followed.received++;
            followed.text = message;
            this.apply();
          },
          onReconnect: () => void this.reload(),
          onError: (error) => this.onError(error),
        });
      }
    } catch (error) {
      // The subscriptions made before the one that failed are closed, not leaked.
      await this.close();
      throw error;
    }
    await this.reload();
  }

  /**
   * Reads the keys and applies them, each unless an update arrived meanwhile (the update is as
   * new as the key or newer).
   */
  async reload(): Promise<void> {
    for (const followed of this.followed) {
      const before = followed.received;
      let value: unknown;
      try {
        value = await this.commander.send(['GET', followed.key]);
      } catch (error) {
        this.onError(error);
        return;
      }
      if (followed.received !== before || value === null || value === undefined) continue;
      followed.text =
        typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : JSON.stringify(value);
    }
    this.apply();
  }

  /**
   * Stops following the channels and closes the subscriber connections, within
   * `closeTimeoutMs` even while Redis is frozen; the rules stay loaded. Never rejects.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const timeoutMs = this.options.closeTimeoutMs ?? REDIS_RULE_SOURCE_DEFAULTS.closeTimeoutMs;
    await Promise.all(this.followed.flatMap((followed) => followed.subscription?.close(timeoutMs) ?? []));
  }

  /** The last texts of Sentinel's keys, by type. */
  private sentinelTexts(): Partial<Record<SentinelRuleType, string>> {
    const texts: Partial<Record<SentinelRuleType, string>> = {};
    for (const f of this.followed) if (f.type !== undefined && f.text !== undefined) texts[f.type] = f.text;
    return texts;
  }

  /** Applies the keys' last texts, judged as they are, or rejects them whole (the rules in force stay). */
  private apply(): void {
    if (this.closed || this.followed.every((f) => f.text === undefined)) return;
    const version = JSON.stringify(this.followed.map((f) => f.text ?? null));
    if (version === this.lastApplied) return;
    let rules: unknown;
    try {
      const where = this.followed.map((f) => `"${f.key}"`).join(', ');
      rules =
        this.format === undefined
          ? parseRulesJson(this.followed[0]!.text!, `Rules from Redis key ${where} rejected`)
          : this.format.read(this.sentinelTexts(), `Rules from Redis keys ${where} rejected`);
    } catch (error) {
      if (!(error instanceof RuleValidationError)) throw error;
      this.engine.reportRejectedRules(error, { source: 'redis' });
      this.onError(error);
      return;
    }
    try {
      this.engine.loadRules(rules as RuleSetOptions, { source: 'redis' });
      this.lastApplied = version;
    } catch (error) {
      this.onError(error);
    }
  }
}

/**
 * Loads rules from a Redis key at start and applies every update published on a channel.
 * Resolves once subscribed and the key is loaded. Publish updates with {@link publishRules}.
 * With `format: 'sentinel'` (or `'sentinel-golang'`) and `keys`, follows Sentinel's rule JSON,
 * a key and channel per Sentinel rule type, as Sentinel's Redis data source does.
 * @throws TypeError when `key` or `channel` is missing (in Sentinel's format: when `keys` names
 * no type, a type the format refuses, or a target that is not a `{ key, channel }`), or `client`
 * is not a Redis client;
 * RangeError when `closeTimeoutMs` is not a finite number > 0;
 * rejects when the first subscription or read fails.
 * @example
 * const source = await redisRuleSource({ client: redis, key: 'shop:rules', channel: 'shop:rules', floodgate: fg });
 * fg.on('rulesRejected', ({ issues }) => log.error({ issues }, 'rules from Redis rejected'));
 * // ... on shutdown:
 * await source.close();
 * @example
 * // The keys a Java service's RedisDataSource follows:
 * await redisRuleSource({ client: redis, floodgate: fg, format: 'sentinel', keys: {
 *   flow: { key: 'sentinel:shop:flow', channel: 'sentinel:shop:flow' },
 *   degrade: { key: 'sentinel:shop:degrade', channel: 'sentinel:shop:degrade' },
 * } });
 */
export async function redisRuleSource(options: RedisRuleSourceOptions): Promise<RedisRuleSource> {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('redisRuleSource(options): options must be an object');
  const format = sentinelFormat(options.format, 'redisRuleSource(options): format');
  if (format === undefined) {
    const floodgate = options as FloodgateRedisRules;
    for (const field of ['key', 'channel'] as const) {
      if (typeof floodgate[field] !== 'string' || floodgate[field] === '') {
        throw new TypeError(
          `redisRuleSource(options): ${field} must be a non-empty string, got ${JSON.stringify(floodgate[field])}`,
        );
      }
    }
  } else {
    format.checkPlaces(
      (options as SentinelRedisRules).keys,
      isTarget,
      'a { key, channel } of non-empty strings',
      'redisRuleSource(options): keys',
    );
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
    format,
    options.floodgate ?? defaultFloodgate,
    onError,
  );
  await source.start();
  return source;
}

/** Whether `value` is a `{ key, channel }` of non-empty strings. */
function isTarget(value: unknown): value is PublishRulesTarget {
  if (typeof value !== 'object' || value === null) return false;
  const { key, channel } = value as Partial<Record<'key' | 'channel', unknown>>;
  return typeof key === 'string' && key !== '' && typeof channel === 'string' && channel !== '';
}

/** Options of {@link publishRules}. */
export interface PublishRulesOptions {
  /**
   * `'floodgate'`: the rule set as one JSON text; `'sentinel'` / `'sentinel-golang'`: Sentinel's
   * rule JSON, each type's list to its own key and channel (`targets` by type).
   * @defaultValue 'floodgate'
   */
  readonly format?: 'floodgate' | 'sentinel' | 'sentinel-golang';
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
  options?: PublishRulesOptions & { readonly format?: 'floodgate' },
): Promise<void>;
/**
 * Publishes rules in Sentinel's format: each kind given, in Sentinel's shape (`toSentinelRules`
 * from `@floodgate/core`), stored in its type's key and published on its channel, one
 * transaction per type as Sentinel's writers do. The lists the keys hold are read first and
 * given as `previous`, so unchanged rules are written back exactly as they were (ids, dashboard
 * fields, flowIds, classTypes kept). A kind without rules whose type has no target is left out;
 * one with rules is refused.
 * @throws RuleValidationError listing every problem, and everything Sentinel cannot express, before
 * anything is written; TypeError for bad targets.
 * @example
 * await publishRules(redis, { flow: { key: 'sentinel:shop:flow', channel: 'sentinel:shop:flow' } }, rules, { format: 'sentinel' });
 */
export async function publishRules(
  client: RedisClientLike,
  targets: SentinelRedisTargets,
  rules: RuleSetOptions,
  options: PublishRulesOptions & { readonly format: 'sentinel' | 'sentinel-golang' },
): Promise<void>;
export async function publishRules(
  client: RedisClientLike,
  target: PublishRulesTarget | SentinelRedisTargets,
  rules: RuleSetOptions,
  options: PublishRulesOptions = {},
): Promise<void> {
  const format = sentinelFormat(options.format, 'publishRules: options.format');
  const commander = toRedisCommander(client);
  if (format === undefined) {
    const { key, channel } = target as PublishRulesTarget;
    await commander.setAndPublish(key, channel, ruleSetJson(rules, undefined, 'Rules not published'));
    return;
  }
  format.checkPlaces(target, isTarget, 'a { key, channel } of non-empty strings', 'publishRules: targets');
  const targets = Object.entries(target as SentinelRedisTargets) as [SentinelRuleType, PublishRulesTarget][];
  const previous: Partial<Record<SentinelRuleType, string>> = {};
  for (const [type, { key }] of targets) {
    const value = await commander.send(['GET', key]);
    if (typeof value === 'string') previous[type] = value;
    else if (Buffer.isBuffer(value)) previous[type] = value.toString('utf8');
  }
  const written = format.write(rules, previous, 'Rules not published');
  const issues: RuleIssue[] = [];
  const writes: [PublishRulesTarget, string][] = [];
  for (const [type, { text, rules: count }] of Object.entries(written) as [
    SentinelRuleType,
    { text: string; rules: number },
  ][]) {
    const found = targets.find(([t]) => t === type);
    if (found !== undefined) writes.push([found[1], text]);
    else if (count > 0)
      issues.push({ path: type, message: `cannot be published: no key is given for Sentinel's ${type} rules` });
  }
  if (issues.length > 0) throw new RuleValidationError(issues, 'Rules not published');
  for (const [{ key, channel }, text] of writes) await commander.setAndPublish(key, channel, text);
}
