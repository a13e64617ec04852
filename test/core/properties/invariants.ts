import type { BlockError } from '@floodgate/core';
import type { FlowRule } from '@floodgate/core/metrics';
import { blockResponse } from '@floodgate/core/http';
import { badHeaderNumbers } from '../../support/header-numbers';
import { BreakerProbe, type BreakerStateMachine } from '../../../packages/core/src/circuit-breaker/breaker';
import { CircuitBreakerChecker } from '../../../packages/core/src/circuit-breaker/circuit-breaker-kind';
import { ClusterChecker } from '../../../packages/core/src/cluster/cluster-checker';
import type { ResourceState } from '../../../packages/core/src/engine/resource-state';
import {
  HotParamConcurrencyChecker,
  type InFlightCounter,
} from '../../../packages/core/src/hot-param/hot-param-checker';
import type { Checker } from '../../../packages/core/src/kernel/rule-kind';
import type { StatisticNode } from '../../../packages/core/src/kernel/statistic-node';
import type { Admission, EngineHarness } from './engine-harness';

/**
 * The invariants the property tests check, each computed from what the scenario saw admitted
 * (not from the engine's own counters) wherever it can be, and returning one line per
 * violation. Calls admitted but still waiting in a queue are not seen until they start, so the
 * admitted sets below are a subset of the engine's: every bound checked on them is sound.
 */

/** Float slack for sums of clock times. */
const EPSILON = 1e-6;

/** The slack of a comparison with `x`: {@link EPSILON}, and a few ulps of `x` where it is large. */
function slack(x: number): number {
  return EPSILON + Math.abs(x) * 2 ** -50;
}
/** The engine's check window: the current 500 ms bucket and the one before. */
const BUCKET_MS = 500;

/** In flight: admitted and not ended, or its function still running (after its timeout, too). */
const live = (a: Admission): boolean => !a.cancelled && (!a.entry.exited || a.running);
const kept = (a: Admission): boolean => !a.cancelled;

/** The scope of a flow rule: who it counts together (`undefined`: the rule does not apply). */
function flowGroup(rule: FlowRule, named: ReadonlySet<string>, a: Admission): string | undefined {
  if (rule.limitOrigin === 'default') return '';
  if (rule.limitOrigin === 'other') return a.origin === '' || named.has(a.origin) ? undefined : a.origin;
  return a.origin === rule.limitOrigin ? '' : undefined;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    let group = groups.get(k);
    if (group === undefined) groups.set(k, (group = []));
    group.push(item);
  }
  return groups;
}

/** The resource whose calls can wait for a rule's slot: its start is then that slot. */
function waitingRuleOf(h: EngineHarness, resource: string): object | undefined {
  const rules = h.fg.getRules();
  return (
    rules.flow.find((r) => r.resource === resource && (r.maxQueueingTimeMs ?? 0) > 0) ??
    rules.hotParams.find(
      (r) =>
        r.resource === resource && r.behavior === 'throttle' && (r.maxQueueingTimeMs > 0 || r.cluster !== undefined),
    )
  );
}

/** When a call took its slot of `rule`: its start if the rule is the resource's waiting one, else its admission. */
function slotOf(h: EngineHarness, rule: object, a: Admission): number {
  return waitingRuleOf(h, a.resource) === rule ? a.entry.createdAt : a.entry.admittedAt;
}

/**
 * (a) No window admits more than its threshold: per resource and per origin for QPS flow rules
 * (`reject`, `warmUp`: the 2 × 500 ms window), calls in flight for concurrency rules, the
 * spacing of paced rules (`throttle`, `warmUpThrottle`, hotspot `throttle`), each hotspot
 * value's token bucket (never more than `threshold + burstCount` plus what has been refilled
 * since it was first seen) and calls in flight per value. Cluster rules decide in the shared
 * store, which does not know what the local rule admitted while it was down, so for them the
 * store's own books are checked instead: it is never given back more tokens than it gave.
 */
export function limitViolations(h: EngineHarness): string[] {
  const out: string[] = [];
  const now = h.clock.now();
  const rules = h.fg.getRules();
  for (const rule of rules.flow) {
    if (rule.cluster !== undefined || rule.strategy !== 'direct') continue;
    const named = new Set(
      rules.flow
        .filter((r) => r.resource === rule.resource && r.limitOrigin !== 'default' && r.limitOrigin !== 'other')
        .map((r) => r.limitOrigin),
    );
    const mine = h.admissions.filter((a) => a.resource === rule.resource);
    for (const [group, calls] of groupBy(mine, (a) => flowGroup(rule, named, a))) {
      const where = `flow ${JSON.stringify(rule)} (origin ${JSON.stringify(group)})`;
      if (rule.metric === 'concurrency') {
        // An adaptive limit moves within [minLimit, maxLimit].
        const limit = rule.behavior === 'adaptive' ? rule.maxLimit! : rule.threshold;
        const inFlight = calls.filter((a) => live(a) && a.acquireCount > 0).length;
        if (inFlight > limit) out.push(`${where}: ${inFlight} calls in flight`);
      } else if (rule.behavior === 'reject' || rule.behavior === 'warmUp') {
        const from = Math.floor(now / BUCKET_MS) * BUCKET_MS - BUCKET_MS;
        const passed = calls
          .filter((a) => kept(a) && a.entry.admittedAt >= from && a.entry.admittedAt <= now)
          .reduce((n, a) => n + a.acquireCount, 0);
        if (passed > rule.threshold) out.push(`${where}: ${passed} passed in the window at ${now}`);
      } else {
        out.push(
          ...spacingViolations(
            where,
            calls.filter((a) => kept(a) && a.acquireCount > 0),
            (a) => slotOf(h, rule, a),
            (a) => (1000 * a.acquireCount) / rule.threshold,
          ),
        );
      }
    }
  }
  for (const rule of rules.hotParams) {
    if (rule.cluster !== undefined) continue;
    const byValue = new Map<string, Admission[]>();
    for (const a of h.admissions) {
      if (a.resource !== rule.resource) continue;
      for (const value of new Set(a.values)) {
        let list = byValue.get(value);
        if (list === undefined) byValue.set(value, (list = []));
        list.push(a);
      }
    }
    for (const [value, calls] of byValue) {
      const threshold = Object.hasOwn(rule.specificItems, value) ? rule.specificItems[value]! : rule.threshold;
      const where = `hotspot ${JSON.stringify(rule)} (value ${value})`;
      const taken = (a: Admission): number => a.values.filter((v) => v === value).length;
      if (rule.metric === 'concurrency') {
        const inFlight = calls.filter(live).reduce((n, a) => n + taken(a), 0);
        if (inFlight > threshold) out.push(`${where}: ${inFlight} calls in flight`);
      } else if (rule.behavior === 'reject') {
        const first = h.firstSeen.get(`${rule.resource}\u0000${value}`)!;
        const tokens = calls.filter(kept).reduce((n, a) => n + a.acquireCount * taken(a), 0);
        const bound = threshold + rule.burstCount + (threshold * (now - first)) / rule.durationMs;
        if (tokens > bound + slack(bound))
          out.push(`${where}: ${tokens} tokens taken since ${first}, more than ${bound} at ${now}`);
      } else {
        out.push(
          ...spacingViolations(
            where,
            calls.filter((a) => kept(a) && a.acquireCount > 0),
            (a) => slotOf(h, rule, a),
            (a) => (rule.durationMs * a.acquireCount) / threshold,
          ),
        );
      }
    }
  }
  const over = h.backend?.overReleased() ?? 0;
  if (over > 0) out.push(`the shared store was given back ${over} tokens it never gave`);
  return out;
}

/** Consecutive calls (by slot) spaced at least the cost of the later one apart. */
function spacingViolations(
  where: string,
  calls: readonly Admission[],
  slot: (a: Admission) => number,
  cost: (a: Admission) => number,
): string[] {
  const sorted = [...calls].sort((x, y) => slot(x) - slot(y));
  const out: string[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const gap = slot(sorted[i]!) - slot(sorted[i - 1]!);
    if (gap + slack(slot(sorted[i]!)) < cost(sorted[i]!))
      out.push(
        `${where}: calls at ${slot(sorted[i - 1]!)} and ${slot(sorted[i]!)}, closer than ${cost(sorted[i]!)} ms`,
      );
  }
  return out;
}

/** The engine's tracked resources, with their internal state. */
function statesOf(h: EngineHarness): Map<string, ResourceState> {
  return (h.fg as unknown as { resources: Map<string, ResourceState> }).resources;
}

/** Every concurrency count the engine keeps, by where it is kept. */
export function concurrencyCounts(h: EngineHarness): [string, number][] {
  const counts: [string, number][] = [['inbound', h.fg.inboundStats().concurrency]];
  for (const [resource, state] of statesOf(h)) {
    counts.push([`${resource}`, state.node.concurrency]);
    const origins = state as unknown as {
      named?: Map<string, StatisticNode>;
      others?: { entries(): IterableIterator<[string, StatisticNode]> };
    };
    for (const [origin, node] of origins.named ?? []) counts.push([`${resource} origin ${origin}`, node.concurrency]);
    for (const [origin, node] of origins.others?.entries() ?? [])
      counts.push([`${resource} other origin ${origin}`, node.concurrency]);
    for (const checker of state.rules.checkers) {
      const local = checker instanceof ClusterChecker ? (checker as unknown as { local: Checker }).local : checker;
      if (!(local instanceof HotParamConcurrencyChecker)) continue;
      const cache = (local as unknown as { cache: { entries(): IterableIterator<[string, InFlightCounter]> } }).cache;
      for (const [value, counter] of cache.entries())
        counts.push([`${resource} hotspot value ${value}`, counter.inFlight]);
    }
  }
  return counts;
}

/** (b), at every step: no concurrency count is negative. */
export function negativeCounts(h: EngineHarness): string[] {
  return concurrencyCounts(h)
    .filter(([, n]) => n < 0)
    .map(([where, n]) => `${where}: concurrency ${n}`);
}

/** (b), once every call has ended: every concurrency count is back to 0. */
export function leftoverCounts(h: EngineHarness): string[] {
  return concurrencyCounts(h)
    .filter(([, n]) => n !== 0)
    .map(([where, n]) => `${where}: concurrency ${n} after every call ended`);
}

/** What {@link BreakerWatch} remembers of a half-open period that had every probe taken. */
interface FullPeriod {
  readonly period: number;
  readonly seenAt: number;
}

/** The running probes of `machine`'s current half-open period among the calls the scenario saw admitted. */
function runningProbes(h: EngineHarness, machine: BreakerStateMachine): Admission[] {
  const generation = (machine as unknown as { generation: number }).generation;
  return h.admissions.filter(
    (a) =>
      live(a) &&
      (a.entry.attachments ?? []).some((attached) => {
        if (!(attached instanceof BreakerProbe)) return false;
        const probe = attached as unknown as { machine: BreakerStateMachine; settled: boolean };
        return probe.machine === machine && attached.generation === generation && !probe.settled;
      }),
  );
}

/**
 * (c) No breaker stays half-open past `retryTimeoutMs` without deciding. Observed after every
 * step through `circuitState()`: a half-open breaker either has a probe left for the next call,
 * or has every probe taken with `retryAfterMs` within (0, retryTimeoutMs], and no later than
 * `retryTimeoutMs` after the oldest running probe the scenario knows of started; and a half-open
 * period seen with every probe taken at time t is decided (the breaker reopened or closed) by
 * t + retryTimeoutMs, since every probe of it started by t.
 */
export class BreakerWatch {
  private readonly full = new Map<object, FullPeriod>();

  constructor(private readonly h: EngineHarness) {}

  violations(): string[] {
    const out: string[] = [];
    const now = this.h.clock.now();
    const resources = new Set(this.h.fg.getRules().circuitBreakers.map((rule) => rule.resource));
    for (const resource of resources) {
      const statuses = this.h.fg.circuitState(resource);
      const machines = (statesOf(this.h).get(resource)?.rules.checkers ?? [])
        .filter((checker): checker is CircuitBreakerChecker => checker instanceof CircuitBreakerChecker)
        .map((checker) => (checker as unknown as { machine: BreakerStateMachine }).machine);
      for (const [i, status] of statuses.entries()) {
        const rule = status.rule;
        const where = `breaker ${JSON.stringify(rule)}`;
        const period = this.h.halfOpenPeriods.get(rule) ?? 0;
        const seen = this.full.get(rule);
        if (status.state !== 'halfOpen' || status.retryAfterMs === undefined) continue;
        if (!(status.retryAfterMs > 0 && status.retryAfterMs <= rule.retryTimeoutMs)) {
          out.push(`${where}: half-open with retryAfterMs ${status.retryAfterMs} at ${now}`);
        }
        const probes = runningProbes(this.h, machines[i]!);
        if (probes.length > 0) {
          const deadline = Math.min(...probes.map((a) => a.entry.admittedAt)) + rule.retryTimeoutMs;
          if (now + status.retryAfterMs > deadline + EPSILON)
            out.push(
              `${where}: decides at ${now + status.retryAfterMs}, after its oldest probe's deadline ${deadline}`,
            );
        }
        if (seen === undefined || seen.period !== period) {
          this.full.set(rule, { period, seenAt: now });
        } else if (now > seen.seenAt + rule.retryTimeoutMs) {
          out.push(
            `${where}: half-open period ${period}, every probe taken since ${seen.seenAt}, still undecided at ${now}`,
          );
        }
      }
    }
    return out;
  }

  /** Once every call has ended: no breaker is half-open with a probe still counted as running. */
  leftoverProbes(): string[] {
    const out: string[] = [];
    for (const resource of new Set(this.h.fg.getRules().circuitBreakers.map((rule) => rule.resource))) {
      for (const status of this.h.fg.circuitState(resource)) {
        if (status.state === 'halfOpen' && status.retryAfterMs !== undefined)
          out.push(`breaker ${JSON.stringify(status.rule)}: a probe still running after every call ended`);
      }
    }
    return out;
  }
}

/** The least of a system limit over the rules in force (`Infinity` when none sets it). */
function leastSystemLimit(h: EngineHarness, limit: 'maxQps' | 'maxConcurrency'): number {
  return Math.min(Number.POSITIVE_INFINITY, ...h.fg.getRules().system.map((rule) => rule[limit] ?? Infinity));
}

/**
 * (a) for system rules: the inbound calls passed in the second-level window never exceed the
 * least `maxQps` (counting `acquireCount`), and the inbound calls in flight never exceed the
 * least `maxConcurrency`.
 */
export function systemViolations(h: EngineHarness): string[] {
  const out: string[] = [];
  const now = h.clock.now();
  const inbound = h.admissions.filter((a) => a.inbound);
  const maxQps = leastSystemLimit(h, 'maxQps');
  const from = Math.floor(now / BUCKET_MS) * BUCKET_MS - BUCKET_MS;
  const passed = inbound
    .filter((a) => kept(a) && a.entry.admittedAt >= from && a.entry.admittedAt <= now)
    .reduce((n, a) => n + a.acquireCount, 0);
  if (passed > maxQps) out.push(`system maxQps ${maxQps}: ${passed} inbound passed in the window at ${now}`);
  const maxConcurrency = leastSystemLimit(h, 'maxConcurrency');
  const inFlight = inbound.filter(live).length;
  if (inFlight > maxConcurrency)
    out.push(`system maxConcurrency ${maxConcurrency}: ${inFlight} inbound calls in flight at ${now}`);
  return out;
}

/** What is wrong with the numbers of one block error: its `retryAfterMs`, and its headers in every form. */
function blockNumberViolations(error: BlockError): string[] {
  const out: string[] = [];
  const where = `${error.code} on ${error.resource} (rule ${JSON.stringify(error.rule)})`;
  const wait = error.retryAfterMs;
  if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0)) out.push(`${where}: retryAfterMs ${wait}`);
  for (const draft of ['draft-6', 'draft-7', 'draft-8', false] as const) {
    const { headers } = blockResponse(error, { headers: draft });
    for (const bad of badHeaderNumbers(headers)) out.push(`${where}: ${bad} (${String(draft)})`);
  }
  return out;
}

/** Every number in `value` (an object of statistics) that is not finite, by path. */
function nonFinite(value: unknown, path: string): string[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [`${path} ${value}`];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, v]) => nonFinite(v, `${path}.${key}`));
}

/**
 * (d) No `NaN` or `Infinity` reaches a decision's outside: every block error's `retryAfterMs` is
 * a finite number >= 0 or `undefined`, its HTTP headers (`Retry-After`, and the RateLimit
 * headers in every draft) are whole numbers within [0, MAX_HEADER_VALUE] in their draft's
 * grammar, the breakers' `retryAfterMs` are finite and >= 0, and every statistic is finite.
 * Checks the blocks made since the last check.
 */
export class NumberWatch {
  private seen = 0;

  constructor(
    private readonly h: EngineHarness,
    private readonly resources: readonly string[],
  ) {}

  violations(): string[] {
    const out: string[] = [];
    const blocks = this.h.blocks;
    for (; this.seen < blocks.length; this.seen++) out.push(...blockNumberViolations(blocks[this.seen]!));
    for (const resource of this.resources) {
      for (const status of this.h.fg.circuitState(resource)) {
        const wait = status.retryAfterMs;
        if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0))
          out.push(`breaker ${JSON.stringify(status.rule)}: ${status.state} with retryAfterMs ${wait}`);
      }
      out.push(...nonFinite(this.h.fg.stats(resource), `stats(${resource})`));
    }
    return out;
  }
}
