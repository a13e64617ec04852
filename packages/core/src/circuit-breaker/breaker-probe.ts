import type { EntryAttachment } from '../engine/checker';
import type { Entry } from '../engine/entry';
import type { BreakerStateMachine } from './breaker-state-machine';

/**
 * One probe of a half-open breaker, attached to the entry it let through. It carries the
 * breaker's open-generation, so only probes of the current half-open period can close or
 * reopen the breaker: a probe that was released (timed out, or another probe failed) and
 * finishes later is ignored. Settles once.
 */
export class BreakerProbe implements EntryAttachment {
  private settled = false;

  constructor(
    private readonly machine: BreakerStateMachine,
    /** The breaker's open-generation when the probe was let through. */
    readonly generation: number,
    /** When the probe was let through (clock ms); it times out `retryTimeoutMs` later. */
    readonly startedAt: number,
  ) {}

  /** The probe's call finished: its outcome decides the half-open period. */
  exited(entry: Entry, now: number, rtMs: number): void {
    if (this.settled) return;
    this.settled = true;
    this.machine.probeExited(this, now, rtMs, entry.hasError);
  }

  /** A later check refused the probe's call: the probe is released as a failure. */
  blocked(_entry: Entry, now: number): void {
    if (this.settled) return;
    this.settled = true;
    this.machine.probeReleased(this, now);
  }
}
