import type { BlockError } from '../errors/block-error';
import type { Entry } from './entry';

/**
 * What a check decides: `undefined` to pass, a {@link BlockError} to refuse, or a wait in ms
 * (> 0, only when the caller can wait) after which the call passes, its slot reserved.
 */
export type CheckResult = BlockError | number | undefined;

/**
 * One rule's check on one resource. The engine runs a resource's checkers in the fixed order
 * authority → system → hotspot → flow → circuit breaker; the first refusal wins.
 */
export interface Checker {
  /**
   * Whether {@link Checker.check} may return a wait when the caller can wait (a throttling
   * rule). Resources none of whose checkers wait or decide asynchronously are entered by
   * `enter()` and `run()` through the synchronous path, without an extra promise turn.
   */
  readonly mayWait?: boolean;
  /** Decides synchronously. `canWait` is false for `entry()`/`tryEntry()`. */
  check(entry: Entry, now: number, canWait: boolean): CheckResult;
  /**
   * Decides asynchronously, for `enter()` and `run()` (cluster rules consult a shared store).
   * Checkers without it are decided by {@link Checker.check} in every mode.
   */
  checkAsync?(entry: Entry, now: number): Promise<CheckResult>;
  /**
   * Gives back the slot reserved by a wait the caller abandoned (its signal aborted).
   * @param slotAt - when the abandoned slot was due (the check's `now` + its wait)
   */
  refund?(entry: Entry, slotAt: number): void;
}

/** Runs when a passed entry exits (circuit breakers record the call here). */
export interface ExitHook {
  /** Called once per passed entry, with its response time. */
  onExit(entry: Entry, now: number, rtMs: number): void;
}

/**
 * Per-entry state a checker took and must release: a hotspot concurrency counter, a circuit
 * breaker's probe. Attached with {@link Entry.attach}.
 */
export interface EntryAttachment {
  /** The entry passed every check and has now exited. */
  exited(entry: Entry, now: number, rtMs: number): void;
  /** The entry was refused by a later check: undo what was taken. */
  blocked(entry: Entry, now: number): void;
}
