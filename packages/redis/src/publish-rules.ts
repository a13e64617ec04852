import { ruleSetJson, type RuleSetOptions } from '@floodgate/core';
import { toRedisCommander, type RedisClientLike } from './to-redis-commander';

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
