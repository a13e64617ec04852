/**
 * `@floodgate/core/testing`: time and system signals under a test's control, so tests of guarded
 * code never sleep for real nor depend on the machine's load. `ManualClock` moves only when told
 * to (`advance()`), `ManualProbe` reports the signals it is given (`set()`); an engine takes them
 * as `new Floodgate({ clock, probe })`. `Clock` and `SystemProbe` are what they implement, for a
 * clock or a probe of your own.
 * @packageDocumentation
 */
export { ManualClock } from './manual-clock';
export { ManualProbe } from './manual-probe';
export type { Clock } from '../kernel/clock';
export type { SystemProbe, SystemSignals } from '../system/system-probe';
