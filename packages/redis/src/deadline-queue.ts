import { performance } from 'node:perf_hooks';

/** Something that times out: {@link DeadlineQueue} calls `expire()` once its deadline passes. */
export interface Expirable {
  /** When it times out, on `performance.now()`'s scale. */
  readonly deadline: number;
  /** Whether it settled on its own (then `expire()` is not called). */
  readonly settled: boolean;
  /** Its deadline passed before it settled. */
  expire(): void;
}

/**
 * Timeouts for calls that all wait the same time, with one timer in all instead of one per
 * call: calls enter in deadline order, so the queue is FIFO, and a single timer (unref'd, so it
 * never holds the process open) is armed for the oldest pending deadline. The time is real
 * (`performance.now()`): it bounds I/O, which no injected clock can make faster.
 */
export class DeadlineQueue {
  private items: (Expirable | undefined)[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Tracks `item` until it settles or its deadline passes. */
  add(item: Expirable): void {
    this.items.push(item);
    if (this.timer === undefined) this.arm(item.deadline);
  }

  /** Expires everything still pending (when the backend closes). */
  expireAll(): void {
    this.disarm();
    const items = this.items;
    const head = this.head;
    this.items = [];
    this.head = 0;
    for (let i = head; i < items.length; i++) {
      const item = items[i]!;
      if (!item.settled) item.expire();
    }
  }

  private arm(deadline: number): void {
    // The sweep runs after the next poll phase (setImmediate): when the event loop was busy,
    // replies already in the socket are read first, and only calls still unanswered time out.
    this.timer = setTimeout(
      () => setImmediate(() => this.sweep()),
      Math.max(0, Math.ceil(deadline - performance.now())),
    );
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private sweep(): void {
    this.timer = undefined;
    const now = performance.now();
    const items = this.items;
    let head = this.head;
    while (head < items.length) {
      const item = items[head]!;
      if (!item.settled) {
        if (item.deadline > now) break;
        item.expire();
      }
      items[head] = undefined;
      head++;
    }
    if (head === items.length) {
      this.items = [];
      this.head = 0;
      return;
    }
    if (head > 1024 && head * 2 > items.length) {
      this.items = items.slice(head);
      head = 0;
    }
    this.head = head;
    this.arm(this.items[head]!.deadline);
  }
}
