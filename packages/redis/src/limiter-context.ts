import type { ClusterThresholdType } from '@floodgate/core';
import type { StoreGate } from './store-gate';

/** What a backend gives each of its limiters. */
export interface LimiterContext {
  /** The way to the store, with timeout and breaker. */
  readonly gate: StoreGate;
  /** Prepended to every key. */
  readonly prefix: string;
  /** ARGV[1] of every script: the shared time in ms, or `''` for Redis's own clock. */
  sharedNow(): string;
  /** Local time in ms, for lease expiry and the breaker's cool-down. */
  localNow(): number;
  /** The threshold in force for a rule: × the live instances for `'perInstance'`. */
  effectiveThreshold(threshold: number, thresholdType: ClusterThresholdType): number;
}

/** Reads a reply field as a number. @throws TypeError when it is not one. */
export function replyNumber(reply: unknown, index: number): number {
  const value = Number((reply as unknown[])[index]);
  if (!Array.isArray(reply) || Number.isNaN(value)) throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
  return value;
}
