import { ManualClock } from '@floodgate/core/testing';

/**
 * A {@link ManualClock} that tells when a `sleep()` starts waiting, so a test waits for a call
 * to queue (or to retry, or to pace) as an event, not by polling `pendingSleeps` in real time.
 */
export class WatchedClock extends ManualClock {
  private waiters: (() => void)[] = [];

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const before = this.pendingSleeps;
    const slept = super.sleep(ms, signal);
    if (this.pendingSleeps > before) for (const wake of this.waiters.splice(0)) wake();
    return slept;
  }

  /** Resolves when the next `sleep()` starts waiting (one called from now on; an aborted one does not count). */
  nextSleep(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
