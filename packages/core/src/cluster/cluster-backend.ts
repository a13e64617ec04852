/**
 * A shared store that cluster rules take their decisions from, so limits hold across every
 * process. `@floodgate/redis` provides one (`redisCluster()`); the engine takes it as the
 * `cluster` option.
 */
export interface ClusterBackend {
  /** A name for logs and events, e.g. `'redis'`. */
  readonly name: string;
}
