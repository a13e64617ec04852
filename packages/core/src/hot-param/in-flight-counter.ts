import type { EntryAttachment } from '../engine/checker';

/**
 * Calls in flight for one value of a concurrency hotspot rule. The counter is itself the
 * entry's attachment: each admitted call holds the very object it incremented and decrements
 * it when it exits or is refused by a later check, even after the LRU has evicted the value
 * (a value seen again after eviction gets a fresh counter, which old calls never touch).
 */
export class InFlightCounter implements EntryAttachment {
  /** Calls admitted and not yet exited. */
  inFlight = 0;

  exited(): void {
    this.inFlight--;
  }

  blocked(): void {
    this.inFlight--;
  }
}
