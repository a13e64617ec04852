export { redisCluster, RedisClusterBackend, REDIS_CLUSTER_DEFAULTS, type RedisClusterOptions } from './redis-cluster';
export {
  toRedisCommander,
  type RedisClientLike,
  type RedisCommander,
  type RedisSubscription,
  type SubscriptionHandlers,
} from './redis-commander';
export {
  redisRuleSource,
  RedisRuleSource,
  REDIS_RULE_SOURCE_DEFAULTS,
  publishRules,
  type RedisRuleSourceOptions,
  type RedisRuleSourceCommonOptions,
  type FloodgateRedisRules,
  type SentinelRedisRules,
  type SentinelRedisTargets,
  type PublishRulesTarget,
  type PublishRulesOptions,
} from './redis-rule-source';
export { RedisVersionError, MIN_REDIS_VERSION } from './server-version';
