import type { ClusterDecision } from '@floodgate/core/cluster';

/**
 * Tokens leased to this instance for one rule (and scope): taken from the store in a batch,
 * counted there as admitted, and spent here without a round trip until they run out or the
 * store's bucket they were counted in ends (using them later could exceed the limit in the next
 * window). Also remembers when the store said the window is full, so calls do not ask again
 * before a bucket leaves the window.
 */
export class TokenLease {
  /** Tokens left to spend. */
  tokens = 0;
  /** Local time when the leased tokens expire (the end of their bucket). */
  expiresAt = Number.NEGATIVE_INFINITY;
  /** Room left in the store's window at the last answer, valid until `knownUntil`. */
  room = Number.POSITIVE_INFINITY;
  /** Local time until which `room` holds (the window only frees room when a bucket ends). */
  knownUntil = Number.NEGATIVE_INFINITY;
  /** Local time when a blocked call could pass again, from the store's last refusal. */
  retryAt = Number.NEGATIVE_INFINITY;
  /** The round trip in flight for this lease, shared by the calls that need tokens meanwhile. */
  fetching: Promise<ClusterDecision> | undefined;

  /** Takes `count` leased tokens if there are enough and they have not expired. */
  take(count: number, now: number): boolean {
    if (now >= this.expiresAt || this.tokens < count) return false;
    this.tokens -= count;
    return true;
  }

  /** Whether the store's window is known to have no room for `count` more at `now`. */
  isFull(count: number, now: number): boolean {
    return now < this.knownUntil && count > this.room;
  }

  /** Records a lease of `tokens` (after what the asking call took) valid for `ms`. */
  granted(tokens: number, room: number, ms: number, now: number): void {
    this.tokens = tokens;
    this.expiresAt = now + ms;
    this.noteRoom(room, ms, now);
  }

  /** Records the room left in the store's window, valid for `ms`. */
  noteRoom(room: number, ms: number, now: number): void {
    this.room = room;
    this.knownUntil = now + ms;
  }
}
