/** What {@link BackendBreaker.admit} allows for one call. */
export const enum Admission {
  /** The store is up: ask it. */
  Call,
  /** The cool-down is over: this call probes the store; the others skip it meanwhile. */
  Probe,
  /** The store is down: do not ask it, fall back at once. */
  Skip,
}

/**
 * The breaker on the store (one per backend, shared by every rule): after `failureThreshold`
 * failures in a row (timeouts, errors, connection not ready) the store is declared down and
 * calls stop waiting for it; once `coolDownMs` has passed, one call probes it, and an answer
 * closes the breaker again. So an outage costs each call at most one timeout before the breaker
 * opens, and nothing after.
 */
export class BackendBreaker {
  private state: 'closed' | 'open' | 'halfOpen' = 'closed';
  private failures = 0;
  private retryAt = 0;
  private downSince = 0;

  constructor(
    private readonly failureThreshold: number,
    private readonly coolDownMs: number,
  ) {}

  /** Whether the store is declared down now. */
  get isDown(): boolean {
    return this.state !== 'closed';
  }

  /** Whether a call at `now` may ask the store. */
  admit(now: number): Admission {
    if (this.state === 'closed') return Admission.Call;
    if (this.state === 'open' && now >= this.retryAt) {
      this.state = 'halfOpen';
      return Admission.Probe;
    }
    return Admission.Skip;
  }

  /** The store answered. Returns how long it was down when this answer ends an outage. */
  success(now: number): number | undefined {
    this.failures = 0;
    if (this.state === 'closed') return undefined;
    this.state = 'closed';
    return Math.max(0, now - this.downSince);
  }

  /** The store failed to answer (in time). */
  failure(now: number): void {
    this.failures++;
    if (this.state === 'halfOpen') {
      this.state = 'open';
      this.retryAt = now + this.coolDownMs;
    } else if (this.state === 'closed' && this.failures >= this.failureThreshold) {
      this.state = 'open';
      this.downSince = now;
      this.retryAt = now + this.coolDownMs;
    }
  }
}
