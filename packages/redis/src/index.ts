export { redisCluster, RedisClusterBackend, type RedisClusterOptions } from './redis-cluster';
export { REDIS_CLUSTER_DEFAULTS } from './redis-cluster-defaults';
export type { RedisCommander, RedisSubscription, SubscriptionHandlers } from './redis-commander';
export { toRedisCommander, type RedisClientLike } from './to-redis-commander';
export {
  redisRuleSource,
  RedisRuleSource,
  REDIS_RULE_SOURCE_DEFAULTS,
  type RedisRuleSourceOptions,
} from './redis-rule-source';
export { RedisVersionError, MIN_REDIS_VERSION } from './server-version';
export { publishRules, type PublishRulesTarget } from './publish-rules';
