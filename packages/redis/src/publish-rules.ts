import { normalizeRuleSet, type RuleSetOptions } from '@floodgate/core';
import { toRedisCommander, type RedisClientLike } from './to-redis-commander';

/** Where {@link publishRules} writes: the key and channel a {@link redisRuleSource} follows. */
export interface PublishRulesTarget {
  readonly key: string;
  readonly channel: string;
}

/**
 * Stores a rule set in `key` and publishes it on `channel` in one transaction
 * (`MULTI; SET; PUBLISH; EXEC`, as Sentinel's Redis datasource asks of writers), so every
 * {@link redisRuleSource} applies it and instances starting later read it. Validates first:
 * an invalid rule set is never published.
 * @throws RuleValidationError listing every problem, before anything is written.
 * @example
 * await publishRules(redis, { key: 'shop:rules', channel: 'shop:rules' }, { flow: [{ resource: 'checkout', threshold: 50 }] });
 */
export async function publishRules(client: RedisClientLike, target: PublishRulesTarget, rules: RuleSetOptions): Promise<void> {
  normalizeRuleSet(rules);
  const json = JSON.stringify(rules);
  await toRedisCommander(client).setAndPublish(target.key, target.channel, json);
}
