import { monotonicClock, type Clock } from '../kernel/clock';
import type { ClusterBackend } from '../cluster/cluster-contract';
import { RuleReader, show } from '../kernel/rule-reader';
import { processProbe, type SystemProbe } from './kinds';

/** Options of a {@link Floodgate} engine. */
export interface FloodgateOptions {
  /** Where time comes from; tests pass a `ManualClock`. @defaultValue the monotonic clock */
  readonly clock?: Clock;
  /** A shared store for cluster rules (`redisCluster()` from `@floodgate/redis`). */
  readonly cluster?: ClusterBackend;
  /**
   * Where system rules read the process's load (event-loop delay and utilisation, CPU, memory);
   * tests pass a `ManualProbe`. The default samples only while a system rule that reads it is
   * loaded.
   * @defaultValue `processProbe`, shared by every engine of the process
   */
  readonly probe?: SystemProbe;
  /**
   * Most resources tracked. Past it, new resource names without rules are neither tracked nor
   * limited (inbound calls still pass through system protection), and a `warning` is emitted
   * once. With names of at most 1024 characters, this bounds what resources cost.
   * @defaultValue 6000
   */
  readonly maxResources?: number;
  /**
   * Where random numbers in [0, 1) come from (adaptive throttling draws its refusals from it,
   * outbound retries their jitter); tests pass a seeded or scripted source.
   * @defaultValue `Math.random`
   */
  readonly random?: () => number;
}

/** Defaults of the engine's options. */
export const FLOODGATE_DEFAULTS = Object.freeze({
  /** Sentinel's `MAX_SLOT_CHAIN_SIZE`: resources beyond it are not limited. */
  maxResources: 6000,
} as const);

/** The engine's options, validated, with every default resolved. */
export interface ResolvedFloodgateOptions {
  readonly clock: Clock;
  readonly cluster: ClusterBackend | undefined;
  readonly probe: SystemProbe;
  readonly maxResources: number;
  readonly random: () => number;
}

const OPTION_KEYS = ['clock', 'cluster', 'probe', 'maxResources', 'random'] as const;

/**
 * Validates the engine's options and resolves their defaults.
 * @throws RuleValidationError when an option is unknown or has a wrong value.
 */
export function resolveFloodgateOptions(options: FloodgateOptions): ResolvedFloodgateOptions {
  const reader = new RuleReader();
  const obj = reader.object(options, 'options') ?? {};
  reader.knownKeys(obj, OPTION_KEYS, 'options');
  const clock = obj.clock as Clock | undefined;
  if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock?.sleep !== 'function')) {
    reader.fail('options.clock', 'must have now() and sleep(ms) methods');
  }
  const cluster = obj.cluster as ClusterBackend | undefined;
  if (
    cluster !== undefined &&
    (typeof cluster !== 'object' || cluster === null || typeof cluster.limiter !== 'function')
  ) {
    reader.fail('options.cluster', 'must be a cluster backend, such as redisCluster() from @floodgate/redis');
  }
  const probe = obj.probe as SystemProbe | undefined;
  if (probe !== undefined && (typeof probe?.read !== 'function' || typeof probe?.start !== 'function')) {
    reader.fail('options.probe', 'must have read() and start() methods, such as a ManualProbe');
  }
  const random = obj.random as (() => number) | undefined;
  if (random !== undefined && typeof random !== 'function') {
    reader.fail('options.random', `must be a function returning numbers in [0, 1), got ${show(random)}`);
  }
  const maxResources = reader.number(
    obj,
    'maxResources',
    'options',
    { min: 1, integer: true },
    FLOODGATE_DEFAULTS.maxResources,
  );
  reader.throwIfAny('Invalid Floodgate options');
  return {
    clock: clock ?? monotonicClock,
    cluster,
    probe: probe ?? processProbe,
    random: random ?? Math.random,
    maxResources,
  };
}
