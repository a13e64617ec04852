import type { StatisticNode } from '../stat/statistic-node';

/** {@link TrafficController.tryPass}: the call passes now. */
export const PASS = 0;
/** {@link TrafficController.tryPass}: the call is refused. */
export const BLOCKED = -1;

/**
 * Decides one flow rule: can this call pass, and after what wait? One per rule, holding that
 * rule's state (tokens, pacing).
 */
export interface TrafficController {
  /**
   * {@link PASS}, {@link BLOCKED}, or a wait in ms (> 0) after which the call passes; a wait is
   * returned only when `canWait`, and its slot is then reserved.
   */
  tryPass(node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number;
  /** After {@link BLOCKED}: ms until a retry could pass, or `undefined` when not known. */
  retryAfterMs(node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number | undefined;
  /** Gives back the slot due at `slotAt` of a wait that was abandoned (an aborted `enter()`). */
  refund?(slotAt: number): void;
}
