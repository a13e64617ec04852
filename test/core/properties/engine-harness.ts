import {
  Entry,
  Floodgate,
  isBlockError,
  TimeoutError,
  type BlockError,
  type EntryOptions,
  type RunOptions,
} from '@floodgate/core';
import { ManualClock, type SystemProbe } from '@floodgate/core/testing';
import { MemoryClusterBackend } from '../cluster/memory-cluster-backend';
import type { CallOp, CallValue, Op, Scenario } from './scenario';

/** One call the engine admitted, as the scenario saw it. */
export interface Admission {
  readonly entry: Entry;
  readonly resource: string;
  readonly origin: string;
  readonly acquireCount: number;
  /** Whether the call was inbound (system rules count it). */
  readonly inbound: boolean;
  /** The hotspot values the call carried, one per occurrence. */
  readonly values: readonly string[];
  /** Given back with `cancel()` (by the scenario or by an aborted queue wait). */
  cancelled: boolean;
  /** For `run()`: its function has been called and has not settled (it may have timed out). */
  running: boolean;
}

/** Errors the scenario's own callbacks throw, or its aborts give as reasons. */
const SCENARIO_ERRORS = new Set([
  'boom',
  'then broke',
  'predicate broke',
  'fallback broke',
  'cannot read k',
  'aborted',
]);

/**
 * Runs a {@link Scenario} against a real engine on a `ManualClock` (and, for cluster
 * scenarios, an in-process shared store), recording what the engine admitted, so the property
 * tests can check their invariants after every step and once everything has ended. Every event
 * has a listener that throws, besides one that records; an error the engine throws that is not
 * a block, a timeout, or one the scenario threw itself is collected as `unexpected`.
 */
export class EngineHarness {
  readonly clock = new ManualClock(10_000);
  readonly backend: MemoryClusterBackend | undefined;
  readonly fg: Floodgate;
  /** Every call admitted, in the order the scenario saw it admitted. */
  readonly admissions: Admission[] = [];
  /** When each hotspot value was first presented to each resource (`resource\0value`). */
  readonly firstSeen = new Map<string, number>();
  /** How many half-open periods each breaker (by its rule object) has begun. */
  readonly halfOpenPeriods = new Map<object, number>();
  /** Errors the engine threw that it should not have. */
  readonly unexpected: unknown[] = [];
  /** Every block error the engine made, in order (from `block` events). */
  readonly blocks: BlockError[] = [];
  /** How often each kind of outcome happened (for checking that scenarios reach every path). */
  readonly tally = new Map<string, number>();
  private readonly held: Admission[] = [];
  private readonly pendingEnters: { readonly controller: AbortController; settled: boolean }[] = [];
  private readonly deferred: { readonly resolve: () => void; readonly reject: () => void; settled: boolean }[] = [];
  /** Functions that settle only when the scenario ends (`never`): they outlive their timeouts. */
  private readonly lingering: (() => void)[] = [];
  private readonly runs: { settled: boolean }[] = [];

  /** @param probe - the system signals (the process's own when not given). */
  constructor(
    readonly scenario: Scenario,
    probe?: SystemProbe,
  ) {
    this.backend = scenario.cluster ? new MemoryClusterBackend(this.clock) : undefined;
    this.fg = new Floodgate({
      clock: this.clock,
      ...(this.backend ? { cluster: this.backend } : {}),
      ...(probe ? { probe } : {}),
    });
    this.fg.on('block', (event) => this.blocks.push(event.error));
    this.fg.on('circuitStateChange', (event) => {
      if (event.to === 'halfOpen')
        this.halfOpenPeriods.set(event.rule, (this.halfOpenPeriods.get(event.rule) ?? 0) + 1);
      this.count(`breaker ${event.from} -> ${event.to}`);
    });
    this.fg.on('clusterFallback', (event) => this.count(`cluster fallback (${event.reason})`));
    const broken = (): void => {
      throw new Error('listener broke');
    };
    for (const name of [
      'pass',
      'block',
      'circuitStateChange',
      'clusterFallback',
      'clusterRecover',
      'rulesLoaded',
    ] as const)
      this.fg.on(name, broken);
    this.fg.loadRules(scenario.rules);
  }

  /** Applies one operation and lets every continuation it started run. */
  async apply(op: Op): Promise<void> {
    switch (op.op) {
      case 'call':
        this.call(op);
        break;
      case 'exit': {
        const admission = this.take(op.nth);
        if (admission === undefined) break;
        if (op.error) admission.entry.traceError(new Error('boom'));
        admission.entry.exit();
        break;
      }
      case 'cancel': {
        const admission = this.take(op.nth);
        if (admission === undefined) break;
        admission.entry.cancel();
        admission.cancelled = true;
        this.count('cancelled');
        break;
      }
      case 'abort': {
        const pending = this.pendingEnters.filter((p) => !p.settled);
        if (pending.length > 0) pending[op.nth % pending.length]!.controller.abort(new Error('aborted'));
        break;
      }
      case 'settle': {
        const pending = this.deferred.filter((d) => !d.settled);
        const chosen = pending[op.nth % Math.max(1, pending.length)];
        if (chosen === undefined) break;
        chosen.settled = true;
        if (op.reject) chosen.reject();
        else chosen.resolve();
        break;
      }
      case 'advance':
        await this.clock.advance(op.ms);
        break;
      case 'health':
        this.backend!.health = op.health;
        break;
    }
    await settleContinuations();
  }

  /**
   * Ends everything the scenario started: aborts pending `enter()` calls, settles pending
   * functions, exits every entry held, and moves the clock past every timeout and queue, in up
   * to 20 steps of `stepMs`.
   */
  async finish(stepMs = 1000): Promise<void> {
    for (let round = 0; round < 20; round++) {
      for (const pending of this.pendingEnters) if (!pending.settled) pending.controller.abort(new Error('aborted'));
      for (const deferred of this.deferred) {
        if (deferred.settled) continue;
        deferred.settled = true;
        deferred.resolve();
      }
      while (this.lingering.length > 0) this.lingering.pop()!();
      await settleContinuations();
      while (this.held.length > 0) this.held.pop()!.entry.exit();
      if (
        this.pendingEnters.every((p) => p.settled) &&
        this.runs.every((r) => r.settled) &&
        this.deferred.every((d) => d.settled)
      )
        return;
      await this.clock.advance(stepMs);
      await settleContinuations();
    }
    throw new Error('the scenario did not end: a call neither settled nor timed out');
  }

  /** The entries still held by the scenario (admitted, not ended). */
  get heldCount(): number {
    return this.held.length;
  }

  private call(op: CallOp): void {
    const values = hotValues(op.value);
    const now = this.clock.now();
    for (const value of values) {
      const key = `${op.resource}\u0000${value}`;
      if (!this.firstSeen.has(key)) this.firstSeen.set(key, now);
    }
    const options: EntryOptions = {
      acquireCount: op.acquireCount,
      ...(op.origin !== '' ? { origin: op.origin } : {}),
      ...(op.inbound ? { inbound: true } : {}),
      args: op.value === undefined ? [] : [op.value],
      ...(op.unreadable ? { params: unreadable('k') } : op.value === undefined ? {} : { params: { k: op.value } }),
    };
    const admitted = (entry: Entry, hold: boolean): Admission => {
      this.count(entry.createdAt > entry.admittedAt ? 'admitted after a wait' : 'admitted');
      const admission: Admission = {
        entry,
        resource: op.resource,
        origin: op.origin,
        acquireCount: op.acquireCount,
        inbound: op.inbound,
        values,
        cancelled: false,
        running: false,
      };
      this.admissions.push(admission);
      if (hold) this.held.push(admission);
      return admission;
    };
    switch (op.via) {
      case 'entry': {
        try {
          const result = this.fg.tryEntry(op.resource, options);
          if (result instanceof Entry) admitted(result, true);
        } catch (error) {
          this.expect(error);
        }
        return;
      }
      case 'enter': {
        const pending = { controller: new AbortController(), settled: false };
        this.pendingEnters.push(pending);
        this.fg.enter(op.resource, { ...options, signal: pending.controller.signal }).then(
          (entry) => {
            pending.settled = true;
            admitted(entry, true);
          },
          (error: unknown) => {
            pending.settled = true;
            this.expect(error);
          },
        );
        return;
      }
      case 'run': {
        const run = { settled: false };
        this.runs.push(run);
        this.fg
          .run(
            op.resource,
            (entry) => {
              const admission = admitted(entry, false);
              const result = this.behave(op);
              if (!(result instanceof Promise)) return result;
              admission.running = true;
              const done = (): void => {
                admission.running = false;
              };
              result.then(done, done);
              return result;
            },
            { ...options, ...this.handlers(op) },
          )
          .then(
            () => {
              run.settled = true;
            },
            (error: unknown) => {
              run.settled = true;
              this.expect(error);
            },
          );
      }
    }
  }

  private behave(op: CallOp): unknown {
    switch (op.outcome) {
      case 'value':
        return 1;
      case 'throw':
        throw new Error('boom');
      case 'thenThrows':
        return {
          then() {
            throw new Error('then broke');
          },
        };
      case 'never':
        return new Promise((resolve) => this.lingering.push(() => resolve(1)));
      case 'deferred':
        return new Promise((resolve, reject) => {
          this.deferred.push({ resolve: () => resolve(1), reject: () => reject(new Error('boom')), settled: false });
        });
    }
  }

  private handlers(op: CallOp): RunOptions<unknown> {
    return {
      ...(op.timeoutMs !== undefined ? { timeoutMs: op.timeoutMs } : {}),
      ...(op.fallback === 'value' ? { fallback: () => 0 } : {}),
      ...(op.fallback === 'throws'
        ? {
            fallback: () => {
              throw new Error('fallback broke');
            },
          }
        : {}),
      ...(op.ignore === 'all' ? { exceptionsToIgnore: () => true } : {}),
      ...(op.ignore === 'throws'
        ? {
            exceptionsToIgnore: () => {
              throw new Error('predicate broke');
            },
          }
        : {}),
    };
  }

  private take(nth: number): Admission | undefined {
    if (this.held.length === 0) return undefined;
    return this.held.splice(nth % this.held.length, 1)[0];
  }

  private expect(error: unknown): void {
    if (isBlockError(error)) return this.count(error.code);
    if (error instanceof TimeoutError) return this.count('timeout');
    if (error instanceof Error && SCENARIO_ERRORS.has(error.message)) return this.count(error.message);
    this.unexpected.push(error);
  }

  private count(what: string): void {
    this.tally.set(what, (this.tally.get(what) ?? 0) + 1);
  }
}

/**
 * Plays `scenario` and returns every violation found: `step` is checked after each operation,
 * `end` once every call has ended; an error the engine should not have thrown is one too.
 */
export async function play(
  scenario: Scenario,
  checks: { step?(h: EngineHarness): string[]; end?(h: EngineHarness): string[] },
): Promise<string[]> {
  const h = new EngineHarness(scenario);
  const found: string[] = [];
  for (let i = 0; i < scenario.ops.length && found.length === 0; i++) {
    await h.apply(scenario.ops[i]!);
    for (const violation of checks.step?.(h) ?? [])
      found.push(`after step ${i} (${JSON.stringify(scenario.ops[i])}): ${violation}`);
  }
  if (found.length === 0) {
    await h.finish();
    found.push(...(checks.end?.(h) ?? []));
  }
  for (const error of h.unexpected)
    found.push(`the engine threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return found;
}

/** The hotspot values of a call, one per occurrence (as hotspot rules take them). */
function hotValues(value: CallValue): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** Parameters whose `key` throws when read. */
function unreadable(key: string): Record<string, unknown> {
  return Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw new Error(`cannot read ${key}`);
    },
  });
}

/** Lets every promise continuation run (several turns: chains of then, and ManualClock wake-ups). */
async function settleContinuations(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
}
