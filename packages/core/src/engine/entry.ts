import { isBlockError } from '../errors/block-error';
import type { StatisticNode } from '../stat/statistic-node';
import type { EntryAttachment } from './checker';
import type { ResourceRules } from './resource-rules';

/** @internal What an entry reports its exit to. */
export interface EntryOwner {
  exitEntry(entry: Entry): void;
}

const NO_ARGS: readonly unknown[] = Object.freeze([]);

/**
 * One guarded call that passed its checks. Report business errors with
 * {@link Entry.traceError} and always call {@link Entry.exit}, which records the response time
 * and releases concurrency. Exiting twice is harmless.
 */
export class Entry {
  /** The guarded resource. */
  readonly resource: string;
  /** When the call was admitted (clock ms). Response time runs from here to `exit()`. */
  createdAt: number;
  /** How many tokens the call takes. @defaultValue 1 */
  readonly acquireCount: number;
  /** Who is calling (`''` when not given). */
  readonly origin: string;
  /** The call's arguments, for hotspot rules. */
  readonly args: readonly unknown[];
  /** Named parameters, for hotspot rules with `paramKey`. */
  readonly params: Readonly<Record<string, unknown>> | undefined;

  /** @internal The resource's statistics; `undefined` when the resource is not tracked. */
  node: StatisticNode | undefined;
  /** @internal The statistics of this origin on the resource, when origin rules need them. */
  originNode: StatisticNode | undefined = undefined;
  /** @internal The rules in force when the entry was made. */
  rules: ResourceRules | undefined;
  /** @internal State taken by checks, released on exit or block. */
  attachments: EntryAttachment[] | undefined = undefined;

  private readonly owner: EntryOwner;
  private errorValue: unknown = undefined;
  private errored = false;
  private done = false;

  /** @internal Made by the engine. */
  constructor(
    owner: EntryOwner,
    resource: string,
    now: number,
    acquireCount: number,
    origin: string,
    args: readonly unknown[] | undefined,
    params: Readonly<Record<string, unknown>> | undefined,
    node: StatisticNode | undefined,
    rules: ResourceRules | undefined,
  ) {
    this.owner = owner;
    this.resource = resource;
    this.createdAt = now;
    this.acquireCount = acquireCount;
    this.origin = origin;
    this.args = args ?? NO_ARGS;
    this.params = params;
    this.node = node;
    this.rules = rules;
  }

  /** Whether a business error was traced. */
  get hasError(): boolean {
    return this.errored;
  }

  /** The traced business error, if any. */
  get error(): unknown {
    return this.errorValue;
  }

  /** Whether `exit()` was called. */
  get exited(): boolean {
    return this.done;
  }

  /**
   * Records a business error for this call; circuit breakers count it when the entry exits.
   * Block errors (from a nested guarded call) are not business errors and are ignored, as are
   * calls after `exit()`.
   */
  traceError(error: unknown): void {
    if (this.done || isBlockError(error)) return;
    this.errorValue = error;
    this.errored = true;
  }

  /** @internal Keeps state a check took, to release on exit or block. */
  attach(attachment: EntryAttachment): void {
    (this.attachments ??= []).push(attachment);
  }

  /** Ends the call: records its response time and releases what it holds. Idempotent. */
  exit(): void {
    if (this.done) return;
    this.done = true;
    this.owner.exitEntry(this);
  }
}
