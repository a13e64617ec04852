export { redisCluster, RedisClusterBackend, type RedisClusterOptions } from './redis-cluster';
export { REDIS_CLUSTER_DEFAULTS } from './redis-cluster-defaults';
export {
  toRedisCommander,
  type RedisCommander,
  type RedisClientLike,
  type RedisSubscription,
  type SubscriptionHandlers,
} from './redis-commander';
export { redisRuleSource, RedisRuleSource, type RedisRuleSourceOptions } from './redis-rule-source';
export { publishRules, type PublishRulesTarget } from './publish-rules';
