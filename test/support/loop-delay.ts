import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Watches how long this process's event loop is held up, so tests that bound a real wait
 * (a timeout plus a margin) can tell the engine's delay from the machine's: on a loaded 2-core
 * CI box every timer fires late by what the scheduler took, whatever the code under test does.
 * `maxMs()` is the longest hold-up seen since the watch began.
 */
export function watchLoopDelay(): { maxMs(): number; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return {
    maxMs: () => histogram.max / 1e6,
    stop: () => histogram.disable(),
  };
}
