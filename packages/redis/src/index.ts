export { redisCluster, RedisClusterBackend, type RedisClusterOptions } from './redis-cluster';
export { REDIS_CLUSTER_DEFAULTS } from './redis-cluster-defaults';
export type { RedisCommander, RedisSubscription, SubscriptionHandlers } from './redis-commander';
export { toRedisCommander, type RedisClientLike } from './to-redis-commander';
export { redisRuleSource, RedisRuleSource, type RedisRuleSourceOptions } from './redis-rule-source';
export { publishRules, type PublishRulesTarget } from './publish-rules';
