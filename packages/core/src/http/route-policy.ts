import type { Floodgate } from '../engine/floodgate';
import type { HttpParamReader } from './http-options';
import type { RouteParams } from './route-pattern';

const NO_ARGS: readonly unknown[] = Object.freeze([]);

/**
 * What the HTTP layer knows of one HTTP resource (a route) on one engine: how to read the
 * values of its function-valued hotspot params and its fallback; and, from the engine, whether
 * its rules in force may queue a request (then it is entered with `enter()` and an abort
 * signal, else with the cheaper `tryEntry()`) and whether they read route parameters. Shared by every Floodgate middleware that guards the route, so a
 * request enters each resource once whichever middleware gets there first.
 */
export class RoutePolicy {
  /** The resource, e.g. `'GET /users/:id'`. */
  readonly resource: string;
  /** The route's fallback, if one was declared. */
  fallback: unknown = undefined;
  private readonly readers: HttpParamReader<unknown>[] = [];

  constructor(
    resource: string,
    private readonly engine: Floodgate,
  ) {
    this.resource = resource;
  }

  /** Whether the rules in force on the resource may queue an inbound request (throttling, cluster rules). */
  get queues(): boolean {
    return this.engine.resourceInfo(this.resource).inboundMayWait;
  }

  /** Whether the resource's requests need their path parameters (hotspot rules or param functions read them). */
  get readsParams(): boolean {
    return this.readers.length > 0 || this.engine.resourceInfo(this.resource).paramKeys.length > 0;
  }

  /** How many function-valued params the route reads: the next one's `paramIndex`. */
  get readerCount(): number {
    return this.readers.length;
  }

  /** Adds a function-valued param; hotspot rules read it at `paramIndex` {@link RoutePolicy.readerCount} − 1. */
  addReader(reader: HttpParamReader<unknown>): void {
    this.readers.push(reader);
  }

  /** The entry's `args`: the value of each function-valued param. Allocates only when there is one. */
  args(req: unknown, params: RouteParams): readonly unknown[] {
    const readers = this.readers;
    if (readers.length === 0) return NO_ARGS;
    const args = new Array<unknown>(readers.length);
    for (let i = 0; i < readers.length; i++) args[i] = readers[i]!(req, params);
    return args;
  }
}
