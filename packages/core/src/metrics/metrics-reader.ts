import type { CircuitState } from '../circuit-breaker/circuit-breaker-rule';
import type { RuleBlockCount } from '../engine/block-counts';
import { PriorityCounts, type PriorityCountsSnapshot } from '../engine/priority-counts';
import type { Floodgate } from '../engine/floodgate';
import type { ClusterUnavailableReason } from '../cluster/cluster-contract';
import { RuleValidationError, type RuleIssue } from '../kernel/errors';
import { PRIORITIES } from '../kernel/priority';
import { RuleReader, show } from '../kernel/rule-reader';
import { RT_BUCKET_BOUNDS_MS, type ResourceTotals } from '../kernel/statistic-node';

/** The options every metric exporter shares. */
export interface MetricsReaderOptions {
  /**
   * Resources with a label of their own: the first `maxResources` resources the engine tracked
   * keep theirs for good; every later one is counted together with the others under `'other'`.
   * Bounds the series an exporter makes, whatever the traffic.
   * @defaultValue 1000
   */
  readonly maxResources?: number;
  /**
   * Upper bounds of the response-time histogram, in ms. The engine counts response times in
   * fixed buckets ({@link RT_BUCKET_BOUNDS_MS}, a 1-2-5 series from 0.5 ms to 60 s), so each
   * bound is rounded to the nearest of those on a log scale (25 → 20, 250 → 200, 7.5 → 10;
   * below 0.5 → 0.5, above 60,000 → 60,000) and exported as that bound: a bucket's `le` is
   * always exact. Bounds that round alike are one bucket. `MetricsReader.rtBucketsMs` tells the
   * result.
   * @defaultValue [5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
   */
  readonly rtBucketsMs?: readonly number[];
}

/** Defaults of {@link MetricsReaderOptions}. */
export const METRICS_READER_DEFAULTS = Object.freeze({
  /** Series stay in the tens of thousands at most (a resource has about 25). */
  maxResources: 1000,
  /** Prometheus's default buckets (5 ms to 10 s) in the engine's 1-2-5 series. */
  rtBucketsMs: Object.freeze([5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000]),
} as const);

/**
 * What each metric means, one sentence each: the help of the Prometheus metrics and the
 * description of the OpenTelemetry instruments.
 */
export const METRIC_DESCRIPTIONS = Object.freeze({
  passes: 'Calls admitted by every rule (those given back before they ran included).',
  cancels: 'Calls admitted, then given back before they ran (a later check refused, or a queue was left).',
  blocks:
    "Calls refused, by the kind of rule (flow, hotParam, circuitBreaker, system, authority) and the rule (kind#position among the resource's rules of that kind).",
  priorityPasses: "Calls admitted, by the call's priority (critical, default, sheddable).",
  priorityBlocks: "Calls refused, by the call's priority (critical, default, sheddable), every rule together.",
  successes: 'Calls that exited without a traced error.',
  errors: 'Calls that exited with a traced error (timeouts included).',
  timeouts: 'Calls that exited by their timeoutMs.',
  responseTime: 'Response times of exited calls, from admission to exit.',
  concurrency: 'Calls in flight.',
  breakerState:
    'State of each circuit breaker: 0 closed, 1 open, 2 half-open (none for resources under "other": see the breakers in each state).',
  breakers: 'Circuit breakers in each state, every resource together.',
  transitions: 'Circuit breaker transitions since the exporter was attached, by the states left and entered.',
  fallbacks:
    'Calls a cluster rule decided without its shared store since the exporter was attached, by reason (timeout, error, notReady, breakerOpen) and by what decided (local rule, or pass).',
  listenerErrors: 'Times an event listener of the engine threw.',
  wouldBlocks:
    'Calls a rule in shadow (or beyond its enforcePercent) let through instead of refusing them since the exporter was attached, by resource, kind and rule.',
} as const);

/** A breaker state as a number, for gauges: 0 closed, 1 open, 2 half-open. */
export const BREAKER_STATE_VALUES: Readonly<Record<CircuitState, number>> = Object.freeze({
  closed: 0,
  open: 1,
  halfOpen: 2,
});

/** The label value of every resource past `maxResources`, counted together. */
export const OTHER_RESOURCES = 'other';

/** One resource's counters (or every resource past the cap together, as `'other'`). */
export interface ResourceMetrics {
  /** The resource, or `'other'`. */
  readonly resource: string;
  /** Calls admitted (those given back before they ran, `cancelled`, included). */
  readonly passed: number;
  /** Calls admitted, then given back before they ran (a later check refused, or a queue was left). */
  readonly cancelled: number;
  /** Calls refused, every rule together. */
  readonly blocked: number;
  /** Blocks by the rule that refused them. */
  readonly blocksByRule: readonly RuleBlockCount[];
  /**
   * Passes and blocks by the calls' priority (`Floodgate.priorityCounts()`); per kind the three
   * sum to `passed` and `blocked`.
   */
  readonly byPriority: PriorityCountsSnapshot;
  /** Calls that exited without a traced error. */
  readonly succeeded: number;
  /** Calls that exited with a traced error (timeouts included). */
  readonly failed: number;
  /** Calls that exited by their `timeoutMs`. */
  readonly timedOut: number;
  /** The sum of the response times of exited calls, in ms. */
  readonly rtSumMs: number;
  /**
   * Exited calls whose response time was at most each bound of `MetricsReader.rtBucketsMs`
   * (cumulative, as a Prometheus histogram), then one more: every exited call.
   */
  readonly rtCumulative: readonly number[];
  /** Calls in flight now. */
  readonly concurrency: number;
}

/** One circuit breaker's state, for a resource with a label of its own. */
export interface BreakerMetrics {
  /** The breaker's resource. */
  readonly resource: string;
  /** `circuitBreaker#<n>`: the breaker's position among its resource's breakers. */
  readonly ruleId: string;
  /** Its state at read time. */
  readonly state: CircuitState;
}

/** Breaker transitions counted since the reader was made. */
export interface TransitionCount {
  /** The breaker's resource, or `'other'`. */
  readonly resource: string;
  /** `circuitBreaker#<n>`, as the breaker was named when it moved. */
  readonly ruleId: string;
  /** The state left. */
  readonly from: CircuitState;
  /** The state entered. */
  readonly to: CircuitState;
  /** How many times. */
  readonly count: number;
}

/** Calls a cluster rule decided without its shared store, counted since the reader was made. */
export interface FallbackCount {
  /** The cluster rule's resource, or `'other'`. */
  readonly resource: string;
  /** Why the store did not decide: `'timeout'`, `'error'`, `'notReady'` or `'breakerOpen'`. */
  readonly reason: ClusterUnavailableReason;
  /** `'local'`: the local rule decided; `'pass'`: the call was let through. */
  readonly decidedBy: 'local' | 'pass';
  /** How many calls. */
  readonly count: number;
}

/** Calls a rule in shadow (or beyond its `enforcePercent`) would have refused, counted since the reader was made. */
export interface WouldBlockCount {
  /** The rule's resource, or `'other'`. */
  readonly resource: string;
  /** The kind of the rule, as block errors name it (`'flow'`, `'hotParam'`, ...). */
  readonly kind: string;
  /** The rule, `<kind>#<n>` as `blocksByRule()` names it. */
  readonly ruleId: string;
  /** How many calls. */
  readonly count: number;
}

/** Everything an exporter reports, read from the engine at once. */
export interface MetricsSnapshot {
  /** One entry per resource with a label of its own, in tracking order, then `'other'` if any resource is past the cap. */
  readonly resources: readonly ResourceMetrics[];
  /** The breakers of the resources with labels of their own. */
  readonly breakers: readonly BreakerMetrics[];
  /** How many breakers are in each state, every resource's (those under `'other'` too). */
  readonly breakersByState: Readonly<Record<CircuitState, number>>;
  /** Breaker transitions since the reader was made, by resource (folded), breaker, and states left and entered. */
  readonly transitions: readonly TransitionCount[];
  /** Cluster fallbacks since the reader was made, by resource (folded), reason and what decided. */
  readonly fallbacks: readonly FallbackCount[];
  /** Would-be refusals since the reader was made, by resource (folded), kind and rule. */
  readonly wouldBlocks: readonly WouldBlockCount[];
  /** How many times an event listener of the engine threw. */
  readonly listenerErrors: number;
}

/** How an exporter builds a reader: its own option keys and problems, so one error lists all. */
export interface MetricsReaderSetup {
  /** What is being configured, for the error message: `'collectMetrics options'`. */
  readonly context: string;
  /** The exporter's own option keys, allowed beside the reader's. */
  readonly ownKeys: readonly string[];
  /** Problems the exporter found in its own options. */
  readonly issues?: readonly RuleIssue[];
}

const READER_KEYS = ['maxResources', 'rtBucketsMs'] as const;

interface Counted<T> {
  readonly labels: T;
  count: number;
}

/**
 * What metric exporters (`@floodgate/prometheus`, `@floodgate/opentelemetry`) read from an
 * engine, with labels bounded whatever the traffic: resources past `maxResources` fold into
 * `'other'`, rules are named by kind and position (`'flow#0'`), and parameter values (user ids,
 * IPs) are never read. Reading costs nothing on the entry path: counters come from the engine's
 * own totals, blocks by rule from its per-rule counts, concurrency and breaker states from its
 * state at read time; only breaker transitions, cluster fallbacks (rare) and would-be refusals of
 * rules being rolled out (`wouldBlock`) are counted by listening to their events, from the
 * reader's creation on.
 *
 * @example
 * const reader = new MetricsReader(fg, { maxResources: 200 });
 * const { resources } = reader.read();
 * reader.close();
 */
export class MetricsReader {
  /** The engine read. */
  readonly floodgate: Floodgate;
  /** Resources with labels of their own. */
  readonly maxResources: number;
  /** The histogram's upper bounds in ms, after rounding to the engine's bounds: ascending, distinct. */
  readonly rtBucketsMs: readonly number[];
  /** Each bound's position in {@link RT_BUCKET_BOUNDS_MS}. */
  private readonly boundIndexes: readonly number[];
  private readonly transitions = new Map<string, Counted<Omit<TransitionCount, 'count'>>>();
  private readonly fallbacks = new Map<string, Counted<Omit<FallbackCount, 'count'>>>();
  private readonly wouldBlocks = new Map<string, Counted<Omit<WouldBlockCount, 'count'>>>();
  private readonly stopListening: readonly (() => void)[];

  /**
   * @throws TypeError when `floodgate` is not a Floodgate engine.
   * @throws RuleValidationError listing every bad option (the exporter's own ones too).
   */
  constructor(
    floodgate: Floodgate,
    options: MetricsReaderOptions = {},
    setup: MetricsReaderSetup = { context: 'Invalid metrics options', ownKeys: [] },
  ) {
    if (
      typeof floodgate !== 'object' ||
      floodgate === null ||
      typeof (floodgate as Partial<Floodgate>).blocksByRule !== 'function'
    ) {
      throw new TypeError(
        `${setup.context}: floodgate must be a Floodgate engine (from @floodgate/core), got ${show(floodgate)}`,
      );
    }
    const reader = new RuleReader();
    reader.issues.push(...(setup.issues ?? []));
    const obj = reader.object(options, 'options') ?? {};
    reader.knownKeys(obj, [...READER_KEYS, ...setup.ownKeys], 'options');
    const D = METRICS_READER_DEFAULTS;
    this.maxResources = reader.number(obj, 'maxResources', 'options', { min: 1, integer: true }, D.maxResources);
    const bounds = obj.rtBucketsMs === undefined ? D.rtBucketsMs : reader.array(obj.rtBucketsMs, 'options.rtBucketsMs');
    if (bounds.length === 0) reader.fail('options.rtBucketsMs', 'must hold at least one bound, got []');
    bounds.forEach((bound, i) => {
      if (typeof bound !== 'number' || !Number.isFinite(bound) || bound <= 0) {
        reader.fail(`options.rtBucketsMs[${i}]`, `must be a finite number > 0 (ms), got ${show(bound)}`);
      }
    });
    if (reader.issues.length > 0) throw new RuleValidationError(reader.issues, setup.context);
    this.floodgate = floodgate;
    this.boundIndexes = [...new Set((bounds as number[]).map(nearestBound))].sort((a, b) => a - b);
    this.rtBucketsMs = Object.freeze(this.boundIndexes.map((i) => RT_BUCKET_BOUNDS_MS[i]!));
    this.stopListening = [
      floodgate.on('circuitStateChange', ({ resource, ruleId, from, to }) => {
        count(this.transitions, `${resource}\u0000${ruleId}\u0000${from}\u0000${to}`, { resource, ruleId, from, to });
      }),
      floodgate.on('clusterFallback', ({ resource, reason, decidedBy }) => {
        count(this.fallbacks, `${resource}\u0000${reason}\u0000${decidedBy}`, { resource, reason, decidedBy });
      }),
      floodgate.on('wouldBlock', ({ resource, kind, ruleId }) => {
        count(this.wouldBlocks, `${resource}\u0000${ruleId}`, { resource, kind, ruleId });
      }),
    ];
  }

  /** Reads every metric now. Allocates per resource; call it per scrape or collection, never per call. */
  read(): MetricsSnapshot {
    const fg = this.floodgate;
    const names = fg.resourceNames();
    const resources: ResourceMetrics[] = [];
    const breakers: BreakerMetrics[] = [];
    const breakersByState: Record<CircuitState, number> = { closed: 0, open: 0, halfOpen: 0 };
    let other: Folded | undefined;
    for (let i = 0; i < names.length; i++) {
      const resource = names[i]!;
      const totals = fg.totals(resource);
      if (totals === undefined) continue;
      const labelled = i < this.maxResources;
      const statuses = fg.circuitState(resource);
      for (let b = 0; b < statuses.length; b++) {
        const state = statuses[b]!.state;
        breakersByState[state]++;
        if (labelled) breakers.push({ resource, ruleId: `circuitBreaker#${b}`, state });
      }
      const concurrency = fg.stats(resource)?.concurrency ?? 0;
      const blocks = fg.blocksByRule(resource) ?? [];
      const byPriority = fg.priorityCounts(resource) ?? NO_PRIORITY_COUNTS;
      if (labelled) resources.push(this.resourceMetrics(resource, totals, concurrency, blocks, byPriority));
      else
        (other ??= new Folded(this.boundIndexes.length)).add(
          this.resourceMetrics(OTHER_RESOURCES, totals, concurrency, blocks, byPriority),
        );
    }
    if (other !== undefined) resources.push(other.result());
    const labelOf = this.labelOf(names);
    return {
      resources,
      breakers,
      breakersByState,
      transitions: fold(
        this.transitions,
        (l) => ({ ...l, resource: labelOf(l.resource) }),
        (l) => `${l.resource}\u0000${l.ruleId}\u0000${l.from}\u0000${l.to}`,
      ),
      fallbacks: fold(
        this.fallbacks,
        (l) => ({ ...l, resource: labelOf(l.resource) }),
        (l) => `${l.resource}\u0000${l.reason}\u0000${l.decidedBy}`,
      ),
      wouldBlocks: fold(
        this.wouldBlocks,
        (l) => ({ ...l, resource: labelOf(l.resource) }),
        (l) => `${l.resource}\u0000${l.ruleId}`,
      ),
      listenerErrors: fg.listenerErrors,
    };
  }

  /** Stops counting transitions and fallbacks (removes the reader's listeners). */
  close(): void {
    for (const stop of this.stopListening) stop();
  }

  private resourceMetrics(
    resource: string,
    totals: ResourceTotals,
    concurrency: number,
    blocksByRule: readonly RuleBlockCount[],
    byPriority: PriorityCountsSnapshot,
  ): ResourceMetrics {
    const rtCumulative: number[] = [];
    let sum = 0;
    let next = 0;
    for (let b = 0; b < totals.rtBuckets.length; b++) {
      sum += totals.rtBuckets[b]!;
      if (b === this.boundIndexes[next]) {
        rtCumulative.push(sum);
        next++;
      }
    }
    rtCumulative.push(sum);
    return {
      resource,
      passed: totals.pass,
      cancelled: totals.cancel,
      blocked: totals.block,
      blocksByRule,
      byPriority,
      // Exits and errors are counted in one step, so the difference never goes down.
      succeeded: totals.success - totals.error,
      failed: totals.error,
      timedOut: totals.timeout,
      rtSumMs: totals.rtSumMs,
      rtCumulative,
      concurrency,
    };
  }

  /** The label of a resource by name: its own for the first `maxResources` tracked, else `'other'`. */
  private labelOf(names: readonly string[]): (resource: string) => string {
    let own: Set<string> | undefined;
    return (resource) => {
      own ??= new Set(names.length <= this.maxResources ? names : names.slice(0, this.maxResources));
      return own.has(resource) ? resource : OTHER_RESOURCES;
    };
  }
}

/** The position in {@link RT_BUCKET_BOUNDS_MS} of the bound nearest to `ms` on a log scale. */
function nearestBound(ms: number): number {
  let best = 0;
  for (let i = 1; i < RT_BUCKET_BOUNDS_MS.length; i++) {
    if (Math.abs(Math.log(RT_BUCKET_BOUNDS_MS[i]! / ms)) < Math.abs(Math.log(RT_BUCKET_BOUNDS_MS[best]! / ms)))
      best = i;
  }
  return best;
}

function count<T>(map: Map<string, Counted<T>>, key: string, labels: T): void {
  const slot = map.get(key);
  if (slot === undefined) map.set(key, { labels, count: 1 });
  else slot.count++;
}

/** The counts of `map` with their labels rewritten by `relabel`, merged where they now coincide. */
function fold<T extends object>(
  map: ReadonlyMap<string, Counted<T>>,
  relabel: (labels: T) => T,
  keyOf: (labels: T) => string,
): (T & { count: number })[] {
  const out = new Map<string, T & { count: number }>();
  for (const { labels, count: n } of map.values()) {
    const folded = relabel(labels);
    const key = keyOf(folded);
    const slot = out.get(key);
    if (slot === undefined) out.set(key, { ...folded, count: n });
    else slot.count += n;
  }
  return [...out.values()];
}

const NO_PRIORITY_COUNTS: PriorityCountsSnapshot = new PriorityCounts().read();

/** Every resource past the cap, summed. */
class Folded {
  private passed = 0;
  private cancelled = 0;
  private blocked = 0;
  private succeeded = 0;
  private failed = 0;
  private timedOut = 0;
  private rtSumMs = 0;
  private concurrency = 0;
  private readonly rtCumulative: number[];
  private readonly blocks = new Map<string, { kind: string; ruleId: string; count: number }>();
  private readonly byPriority = new PriorityCounts();

  constructor(bounds: number) {
    this.rtCumulative = new Array<number>(bounds + 1).fill(0);
  }

  add(m: ResourceMetrics): void {
    this.passed += m.passed;
    this.cancelled += m.cancelled;
    this.blocked += m.blocked;
    this.succeeded += m.succeeded;
    this.failed += m.failed;
    this.timedOut += m.timedOut;
    this.rtSumMs += m.rtSumMs;
    this.concurrency += m.concurrency;
    for (let b = 0; b < this.rtCumulative.length; b++) this.rtCumulative[b]! += m.rtCumulative[b]!;
    for (const p of PRIORITIES) {
      this.byPriority.passed(p, m.byPriority.passed[p]);
      this.byPriority.blocked(p, m.byPriority.blocked[p]);
    }
    for (const block of m.blocksByRule) {
      const slot = this.blocks.get(block.ruleId);
      if (slot === undefined) this.blocks.set(block.ruleId, { ...block });
      else slot.count += block.count;
    }
  }

  result(): ResourceMetrics {
    return {
      resource: OTHER_RESOURCES,
      passed: this.passed,
      cancelled: this.cancelled,
      blocked: this.blocked,
      blocksByRule: [...this.blocks.values()],
      byPriority: this.byPriority.read(),
      succeeded: this.succeeded,
      failed: this.failed,
      timedOut: this.timedOut,
      rtSumMs: this.rtSumMs,
      rtCumulative: this.rtCumulative,
      concurrency: this.concurrency,
    };
  }
}
