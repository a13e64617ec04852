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
