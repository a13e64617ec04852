import { status as Status } from '@grpc/grpc-js';
import { BlockError, type Floodgate } from '@floodgate/core';
import type { Refusal } from '@floodgate/core/http';

/** What a {@link PushbackError} was refused by: the pushback a server sent for a method. */
export interface Pushback {
  /** The client resource the pushback pauses (`'localhost:50051/demo.Echo/Say'`). */
  readonly resource: string;
  /** The wait the server asked for, in ms (at most the interceptor's `maxPushbackMs`). */
  readonly pushbackMs: number;
  /** The status code the server answered with it; the calls it pauses are answered with it too. */
  readonly code: Status;
}

/**
 * A client call refused locally because the server's pushback (gRFC A6's
 * `grpc-retry-pushback-ms`) for its method has not passed. Code `ERR_PUSHBACK`; `retryAfterMs` is
 * the time left. Answered with the status code the server sent with the pushback
 * (`RESOURCE_EXHAUSTED`, `PERMISSION_DENIED`, else `UNAVAILABLE`). Not an engine block: it
 * emits no `block` event and is not counted in the resource's statistics, since no rule refused it.
 */
export class PushbackError extends BlockError<Pushback> {
  get code(): 'ERR_PUSHBACK' {
    return 'ERR_PUSHBACK';
  }
  get kind(): 'pushback' {
    return 'pushback';
  }
  get refusal(): Refusal {
    const code = this.rule.code;
    return code === Status.RESOURCE_EXHAUSTED ? 'quota' : code === Status.PERMISSION_DENIED ? 'forbidden' : 'capacity';
  }
  get detail(): string {
    return 'The server asked for no calls to this method until its pushback has passed.';
  }
  get name(): string {
    return 'PushbackError';
  }
  get message(): string {
    return `"${this.resource}" is paused by the server's pushback of ${this.rule.pushbackMs} ms`;
  }
}

/** Most methods paused at once per engine; past it the oldest pause is forgotten (a bound on what a server can make the client keep). */
export const MAX_PAUSED_METHODS = 10_000;

const tables = new WeakMap<Floodgate, PushbackTable>();

/**
 * The pushbacks in force on one engine's client resources: until when (on the engine's clock)
 * each paused method answers locally. Shared by every client interceptor of the engine, so a
 * server's pushback pauses its method for every client of the process that guards it.
 */
export class PushbackTable {
  private readonly paused = new Map<string, { readonly until: number; readonly pushback: Pushback }>();

  private constructor(private readonly engine: Floodgate) {}

  /** The table of `engine`, made on first use. */
  static of(engine: Floodgate): PushbackTable {
    let table = tables.get(engine);
    if (table === undefined) tables.set(engine, (table = new PushbackTable(engine)));
    return table;
  }

  /** Pauses `resource` for `pushbackMs` from now (the server's latest word replaces an earlier one; 0 lifts it). */
  record(resource: string, code: Status, pushbackMs: number): void {
    const paused = this.paused;
    paused.delete(resource);
    if (pushbackMs <= 0) return;
    if (paused.size >= MAX_PAUSED_METHODS) paused.delete(paused.keys().next().value!);
    paused.set(resource, { until: this.engine.clock.now() + pushbackMs, pushback: { resource, pushbackMs, code } });
  }

  /** The refusal of a call to `resource` while its pushback has not passed, else `undefined`. Cheap when nothing is paused. */
  check(resource: string): PushbackError | undefined {
    if (this.paused.size === 0) return undefined;
    const pause = this.paused.get(resource);
    if (pause === undefined) return undefined;
    const left = pause.until - this.engine.clock.now();
    if (left <= 0) {
      this.paused.delete(resource);
      return undefined;
    }
    return new PushbackError({ resource, rule: pause.pushback, retryAfterMs: left });
  }
}
