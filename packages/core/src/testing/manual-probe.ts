import { show } from '../kernel/rule-reader';
import type { SystemProbe, SystemSignals } from '../system/system-probe';

const SIGNALS: readonly (keyof SystemSignals)[] = [
  'eventLoopDelayMs',
  'eventLoopUtilization',
  'cpuUsage',
  'heapUsedBytes',
  'rssBytes',
];

/**
 * A probe whose signals change only when told to, as `ManualClock` moves only when told to:
 * tests set the load system protection sees, exactly, instead of burning CPU.
 *
 * @example
 * const probe = new ManualProbe();
 * const fg = new Floodgate({ clock: new ManualClock(), probe });
 * fg.loadSystemRules([{ maxEventLoopDelayMs: 100 }]);
 * probe.set({ eventLoopDelayMs: 250 });   // now over the threshold
 */
export class ManualProbe implements SystemProbe {
  private signals: SystemSignals;
  private users = 0;

  /**
   * @param signals - the initial signals; each one not given is 0.
   * @throws RangeError for a signal that is not a finite number >= 0.
   */
  constructor(signals: Partial<SystemSignals> = {}) {
    this.signals = merge(
      { eventLoopDelayMs: 0, eventLoopUtilization: 0, cpuUsage: 0, heapUsedBytes: 0, rssBytes: 0 },
      signals,
    );
  }

  /**
   * Changes the signals given; the others keep their values.
   * @throws RangeError for a signal that is not a finite number >= 0 (or an unknown one).
   */
  set(signals: Partial<SystemSignals>): void {
    this.signals = merge(this.signals, signals);
  }

  /** The signals as last set. */
  read(): SystemSignals {
    return this.signals;
  }

  /** Records a request to sample (see {@link ManualProbe.sampling}); returns the function that withdraws it. */
  start(): () => void {
    this.users++;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.users--;
    };
  }

  /** Whether some system rule in force asked for the signals (the default probe would be sampling). */
  get sampling(): boolean {
    return this.users > 0;
  }
}

function merge(base: SystemSignals, change: Partial<SystemSignals>): SystemSignals {
  for (const [key, value] of Object.entries(change)) {
    if (!(SIGNALS as readonly string[]).includes(key))
      throw new RangeError(`ManualProbe: unknown signal ${show(key)} (known: ${SIGNALS.join(', ')})`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new RangeError(`ManualProbe: ${key} must be a finite number >= 0, got ${show(value)}`);
  }
  return Object.freeze({ ...base, ...change });
}
