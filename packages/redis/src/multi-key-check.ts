import type { ClusterDecision } from '@floodgate/core/cluster';
import type { QueuedCheck } from './coalescing-queue';
import { replyNumber } from './reply-number';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });

/**
 * One check of a hotspot or pacing rule waiting for its batch: it names one key or several (a
 * hotspot rule's array argument), each with a number for the script (a token count or a pacing
 * cost).
 */
export class MultiKeyCheck implements QueuedCheck {
  resolve!: (decision: ClusterDecision) => void;
  readonly promise = new Promise<ClusterDecision>((resolve) => (this.resolve = resolve));

  constructor(
    readonly acquireCount: number,
    readonly keys: readonly string[],
    readonly values: readonly number[],
  ) {}
}

/**
 * Resolves each check of `batch` from a reply of three fields per check, `status, ms, index`:
 * `1` passed, `2` passed after waiting `ms` (pacing), `0` refused by its key at `index` with
 * `ms` to wait before a retry (-1: never).
 */
export function resolveMultiKey(
  reply: unknown,
  batch: readonly MultiKeyCheck[],
  recoveredAfterMs: number | undefined,
): void {
  for (let i = 0; i < batch.length; i++) {
    const status = replyNumber(reply, 3 * i);
    const ms = replyNumber(reply, 3 * i + 1);
    // The first answer after an outage carries the recovery, once.
    const extra = i === 0 && recoveredAfterMs !== undefined ? { recoveredAfterMs } : undefined;
    let decision: ClusterDecision;
    if (status === 1) decision = extra === undefined ? PASS : { status: 'pass', ...extra };
    else if (status === 2) decision = { status: 'wait', waitMs: ms, ...extra };
    else
      decision = {
        status: 'block',
        retryAfterMs: ms < 0 ? undefined : ms,
        index: replyNumber(reply, 3 * i + 2),
        ...extra,
      };
    batch[i]!.resolve(decision);
  }
}
