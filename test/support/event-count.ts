/**
 * A count of events that a test waits on: `reached(n)` resolves once the n-th event has come,
 * however long that takes, so a test waits for what happens rather than for real time. A wait
 * that resolves in a listener continues only after the emitter's other listeners have run (the
 * emit is synchronous; the continuation is a microtask), so it sees what they did.
 */
export class EventCount {
  private n = 0;
  private readonly waiters: { readonly n: number; readonly resolve: () => void }[] = [];

  /** How many events so far. */
  get count(): number {
    return this.n;
  }

  /** One more event: wakes every wait it completes. */
  add(): void {
    this.n++;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.n > this.n) continue;
      this.waiters.splice(i, 1);
      waiter.resolve();
    }
  }

  /** Resolves once `n` events have come (at once if they have). */
  reached(n: number): Promise<void> {
    if (this.n >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }
}
