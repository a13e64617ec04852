/**
 * Names the root exported until 0.2.0 that now live in another entry point, kept here until
 * 0.3.0 so that code importing them from `@floodgate/core` keeps working (with a deprecation
 * notice in editors). Each is the same value or type as in its new entry point.
 */
import type { CircuitStateChangeEvent as BreakerChange } from './circuit-breaker/circuit-breaker-rule';
import {
  DIAGNOSTICS_CHANNELS as CHANNELS,
  type ClusterFallbackEvent as Fallback,
  type FloodgateEventMap,
} from './engine/events';
import type { DiagnosticsMessage as Message } from './engine/floodgate';
import type { Clock as EngineClock } from './kernel/clock';
import { ManualClock as TestClock } from './testing/manual-clock';
import { ManualProbe as TestProbe } from './testing/manual-probe';

/**
 * The test clock, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualClock` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export const ManualClock = TestClock;
/**
 * The test clock, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualClock` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export type ManualClock = TestClock;

/**
 * The test probe, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualProbe` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export const ManualProbe = TestProbe;
/**
 * The test probe, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualProbe` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export type ManualProbe = TestProbe;

/**
 * The engine's clock contract, now in `@floodgate/core/testing`.
 * @deprecated Import `Clock` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export type Clock = EngineClock;

/**
 * The diagnostics channels, now in `@floodgate/core/metrics`.
 * @deprecated Import `DIAGNOSTICS_CHANNELS` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export const DIAGNOSTICS_CHANNELS = CHANNELS;

/**
 * A diagnostics channel's message, now in `@floodgate/core/metrics`.
 * @deprecated Import `DiagnosticsMessage` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export type DiagnosticsMessage<K extends keyof FloodgateEventMap = keyof FloodgateEventMap> = Message<K>;

/**
 * The `circuitStateChange` event, now in `@floodgate/core/metrics`.
 * @deprecated Import `CircuitStateChangeEvent` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export type CircuitStateChangeEvent = BreakerChange;

/**
 * The `clusterFallback` event, now in `@floodgate/core/metrics`.
 * @deprecated Import `ClusterFallbackEvent` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export type ClusterFallbackEvent = Fallback;
