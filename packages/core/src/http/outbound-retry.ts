import type { Floodgate } from '../engine/floodgate';
import { Entry } from '../kernel/entry';

/** The backoff of a retry policy: exponential, capped, with full jitter. */
export interface RetryBackoff {
  /** The ceiling of the first retry's backoff, in ms; it doubles with each retry. */
  readonly baseDelayMs: number;
  /** The highest ceiling, in ms. */
  readonly maxDelayMs: number;
}

/**
 * The wait before retry `retry` (1 for the first retry) of an outbound call: drawn uniformly from
 * [0, min(maxDelayMs, baseDelayMs × 2^(retry−1))] ms (AWS's "full jitter", gRFC A6's backoff),
 * from `random` (the engine's random source, so tests decide the draw), and at least `askedMs`,
 * the wait the dependency asked for (HTTP's `Retry-After`, gRPC's `grpc-retry-pushback-ms`).
 *
 * @example
 * const waitMs = retryDelayMs(1, { baseDelayMs: 50, maxDelayMs: 2000 }, fg.random); // within [0, 50)
 */
export function retryDelayMs(retry: number, backoff: RetryBackoff, random: () => number, askedMs?: number): number {
  const ceiling = Math.min(backoff.maxDelayMs, backoff.baseDelayMs * 2 ** (retry - 1));
  return Math.max(random() * ceiling, askedMs ?? 0);
}

/**
 * Whether the retry budgets of `resource` (rules of the `retryBudgets` kind) allow a retry now,
 * read before an outbound guard waits a backoff for one, so that no caller waits only to be
 * refused (the retry's own entry, `attempt: 'retry'`, may still be refused after the wait). When
 * they do not, a retry is entered anyway and refused, so that the engine counts and announces its
 * block (`retryBudget#0`) as if it had been sent. `true` when the resource has no budget.
 *
 * @example
 * if (retryBudgetAllows(fg, resource)) await fg.clock.sleep(retryDelayMs(1, backoff, fg.random));
 */
export function retryBudgetAllows(fg: Floodgate, resource: string): boolean {
  for (const budget of fg.retryBudgets(resource)) {
    if (budget.balance >= 1) continue;
    const refused = fg.tryEntry(resource, { attempt: 'retry' });
    if (refused instanceof Entry) refused.cancel();
    return false;
  }
  return true;
}

/**
 * Keeps the process alive while outbound calls wait with nothing of their own open (a backoff
 * before a retry, a queued admission): the engine's clock waits on unref'd timers, and a script
 * whose only pending work is one call would otherwise exit in the middle of a retry. One ref'd
 * handle for every call of a guard, ref'd while any waits; it never fires.
 *
 * @example
 * const keepAlive = new KeepAlive();
 * await keepAlive.during(fg.clock.sleep(waitMs));
 */
export class KeepAlive {
  private waiting = 0;
  private handle: NodeJS.Timeout | undefined;

  /** Holds the process alive until `promise` settles, and returns it. */
  during<T>(promise: Promise<T>): Promise<T> {
    if (this.waiting++ === 0) (this.handle ??= setInterval(() => undefined, 2 ** 31 - 1)).ref();
    const release = (): void => {
      if (--this.waiting === 0) this.handle!.unref();
    };
    promise.then(release, release);
    return promise;
  }
}
