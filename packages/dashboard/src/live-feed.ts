import type {
  BlockEvent,
  CircuitBreakerRule,
  CircuitState,
  CircuitStateChangeEvent,
  Floodgate,
  RuleDescription,
  RuleIssue,
  RuleKindKey,
} from '@floodgate/core';

/** One second of one resource, as the page charts it. */
export interface SecondPoint {
  /** When the second started, in the engine clock's ms. */
  readonly t: number;
  readonly pass: number;
  readonly block: number;
  readonly error: number;
  /** Mean response time of the calls that exited in that second, in ms. */
  readonly rtMs: number;
}

/** One breaker transition. */
export interface Transition {
  readonly at: number;
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly value: number | undefined;
}

/** One breaker as the page shows it. */
export interface BreakerView {
  readonly resource: string;
  readonly rule: CircuitBreakerRule;
  readonly state: CircuitState;
  readonly retryAfterMs: number | undefined;
  /** The latest transitions, oldest first. */
  readonly transitions: readonly Transition[];
}

/** One refused call as the page lists it. */
export interface BlockView {
  readonly seq: number;
  readonly at: number;
  readonly resource: string;
  readonly origin: string;
  /** The rule kind that refused it (`flow`, `hotParams`, `circuitBreakers`, `authority`, `system`). */
  readonly kind: string;
  readonly code: string;
  readonly rule: unknown;
}

/** The last rule set a source or the dashboard could not load. */
export interface RejectionView {
  readonly at: number;
  readonly source: string;
  readonly issues: readonly RuleIssue[];
}

/** What a page needs to draw itself from nothing. */
export interface Snapshot {
  readonly now: number;
  readonly intervalMs: number;
  readonly historySeconds: number;
  readonly resources: readonly {
    readonly name: string;
    readonly concurrency: number;
    readonly points: readonly SecondPoint[];
  }[];
  /** Tracked resources beyond `maxResources`, not shown. */
  readonly hiddenResources: number;
  readonly breakers: readonly BreakerView[];
  readonly rules: readonly RuleDescription[];
  /** The rule kinds, in check order (the editor's keys). */
  readonly kinds: readonly RuleKindKey[];
  readonly blocks: readonly BlockView[];
  /** Most blocks listed. */
  readonly recentBlocks: number;
  readonly rejected: RejectionView | undefined;
}

/** What changed in one interval. */
export interface Tick {
  readonly now: number;
  readonly resources: readonly {
    readonly name: string;
    readonly concurrency: number;
    readonly points: readonly SecondPoint[];
  }[];
  readonly hiddenResources: number;
  readonly breakers: readonly BreakerView[];
  readonly blocks: readonly BlockView[];
}

/** The bounds of a {@link LiveFeed}. */
export interface LiveFeedLimits {
  readonly intervalMs: number;
  readonly historySeconds: number;
  readonly maxResources: number;
  readonly recentBlocks: number;
  readonly transitionsPerBreaker: number;
}

/** Something that receives the feed: one connected page. */
export interface FeedSubscriber {
  /** Sends one server-sent event (`data` is JSON already). */
  send(event: string, data: string): void;
}

const KIND_BY_CODE: Readonly<Record<string, string>> = {
  ERR_FLOW_BLOCKED: 'flow',
  ERR_HOT_PARAM_BLOCKED: 'hotParams',
  ERR_CIRCUIT_OPEN: 'circuitBreakers',
  ERR_AUTHORITY_BLOCKED: 'authority',
  ERR_SYSTEM_BLOCKED: 'system',
};

/** Most breakers whose transitions are remembered (breakers of rules since removed age out). */
const MAX_BREAKERS_REMEMBERED = 1000;

interface Series {
  readonly points: SecondPoint[];
  /** The next second to read from the engine's minute window. */
  next: number;
}

/**
 * The dashboard's view of an engine over time. While no page is connected it costs nothing on
 * the entry path: it listens only to rare events (breaker transitions, rule changes and
 * rejections) and keeps no series. While at least one page is connected, one unref'd timer
 * reads each shown resource's completed seconds from the engine's minute window (backfilling
 * the last minute when it starts) and its concurrency, listens to `block` for the recent
 * blocks, and sends every page the same JSON once per interval. Memory is bounded by
 * {@link LiveFeedLimits}: at most `maxResources` series of `historySeconds` points,
 * `recentBlocks` blocks, `transitionsPerBreaker` transitions for each of at most 1000 breakers.
 */
export class LiveFeed {
  private readonly pages = new Set<FeedSubscriber>();
  private readonly series = new Map<string, Series>();
  private readonly transitions = new Map<string, Transition[]>();
  private blocks: BlockView[] = [];
  private blockSeq = 0;
  private sentBlockSeq = 0;
  private hidden = 0;
  private rejected: RejectionView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopBlocks: (() => void) | undefined;
  private readonly stopEvents: (() => void)[];

  constructor(
    private readonly fg: Floodgate,
    private readonly limits: LiveFeedLimits,
  ) {
    this.stopEvents = [
      fg.on('circuitStateChange', (event) => this.recordTransition(event)),
      fg.on('rulesRejected', ({ source, issues }) => {
        this.rejected = { at: fg.clock.now(), source, issues };
        this.broadcast('rules', () => this.rulesPayload());
      }),
      fg.on('rulesLoaded', () => this.broadcast('rules', () => this.rulesPayload())),
    ];
  }

  /** Pages connected now. */
  get pageCount(): number {
    return this.pages.size;
  }

  /** Adds a page: sends it a snapshot, and starts sampling if it is the first. */
  subscribe(page: FeedSubscriber): () => void {
    if (this.pages.size === 0) this.start();
    this.pages.add(page);
    page.send('snapshot', JSON.stringify(this.snapshot()));
    return () => {
      if (this.pages.delete(page) && this.pages.size === 0) this.stop();
    };
  }

  /** Everything a page draws from; samples first if no page is connected. */
  snapshot(): Snapshot {
    const sampling = this.pages.size > 0;
    if (!sampling) this.sample();
    const snapshot: Snapshot = {
      now: this.fg.clock.now(),
      intervalMs: this.limits.intervalMs,
      historySeconds: this.limits.historySeconds,
      resources: [...this.series].map(([name, series]) => ({
        name,
        concurrency: this.concurrency(name),
        points: series.points,
      })),
      hiddenResources: this.hidden,
      breakers: this.breakers(),
      ...this.rulesPayloadObject(),
      kinds: Object.keys(this.fg.getRules()) as RuleKindKey[],
      blocks: this.blocks.slice(-this.limits.recentBlocks),
      recentBlocks: this.limits.recentBlocks,
    };
    if (!sampling) this.series.clear();
    return snapshot;
  }

  /** Reads the engine once and sends every page what changed. Called by the timer. */
  tick(): void {
    const fresh = this.sample();
    const blocks = this.blocks.filter((block) => block.seq > this.sentBlockSeq).slice(-this.limits.recentBlocks);
    this.sentBlockSeq = this.blockSeq;
    const tick: Tick = {
      now: this.fg.clock.now(),
      resources: [...fresh].map(([name, points]) => ({ name, concurrency: this.concurrency(name), points })),
      hiddenResources: this.hidden,
      breakers: this.breakers(),
      blocks,
    };
    this.broadcast('tick', () => JSON.stringify(tick));
  }

  /** Disconnects nothing, but stops listening to the engine; pages should be closed first. */
  close(): void {
    this.stop();
    for (const stop of this.stopEvents) stop();
  }

  /** The first page arrived: backfill the last minute, then sample once per interval. */
  private start(): void {
    this.sample();
    this.stopBlocks = this.fg.on('block', (event) => this.recordBlock(event));
    this.timer = setInterval(() => this.tick(), this.limits.intervalMs);
    this.timer.unref();
  }

  /** The last page left: stop sampling and forget the series (they are backfilled next time). */
  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopBlocks?.();
    this.stopBlocks = undefined;
    this.series.clear();
    this.hidden = 0;
  }

  /** Reads each shown resource's new completed seconds; returns them by resource. */
  private sample(): Map<string, SecondPoint[]> {
    const fresh = new Map<string, SecondPoint[]>();
    let hidden = 0;
    for (const name of this.fg.resourceNames()) {
      let series = this.series.get(name);
      if (series === undefined) {
        if (this.series.size >= this.limits.maxResources) {
          hidden++;
          continue;
        }
        series = { points: [], next: Number.NEGATIVE_INFINITY };
        this.series.set(name, series);
      }
      const points = this.fg.history(name, series.next).map((s): SecondPoint => ({
        t: s.startMs,
        pass: s.pass,
        block: s.block,
        error: s.error,
        rtMs: Math.round(s.avgRtMs * 10) / 10,
      }));
      if (points.length > 0) {
        series.next = points[points.length - 1]!.t + 1;
        series.points.push(...points);
        const excess = series.points.length - this.limits.historySeconds;
        if (excess > 0) series.points.splice(0, excess);
      }
      fresh.set(name, points);
    }
    this.hidden = hidden;
    return fresh;
  }

  private concurrency(name: string): number {
    return this.fg.stats(name)?.concurrency ?? 0;
  }

  private breakers(): BreakerView[] {
    const views: BreakerView[] = [];
    const resources = new Set(this.fg.getRules().circuitBreakers.map((rule) => rule.resource));
    for (const resource of resources) {
      for (const status of this.fg.circuitState(resource)) {
        views.push({
          resource,
          rule: status.rule,
          state: status.state,
          retryAfterMs: status.retryAfterMs,
          transitions: this.transitions.get(breakerKey(resource, status.rule)) ?? [],
        });
      }
    }
    return views;
  }

  private recordTransition(event: CircuitStateChangeEvent): void {
    const key = breakerKey(event.resource, event.rule);
    let list = this.transitions.get(key);
    if (list === undefined) {
      if (this.transitions.size >= MAX_BREAKERS_REMEMBERED)
        this.transitions.delete(this.transitions.keys().next().value as string);
      list = [];
      this.transitions.set(key, list);
    }
    list.push({ at: this.fg.clock.now(), from: event.from, to: event.to, value: event.value });
    if (list.length > this.limits.transitionsPerBreaker) list.shift();
  }

  private recordBlock(event: BlockEvent): void {
    const error = event.error;
    this.blocks.push({
      seq: ++this.blockSeq,
      at: this.fg.clock.now(),
      resource: event.resource,
      origin: event.origin,
      kind: KIND_BY_CODE[error.code] ?? 'unknown',
      code: error.code,
      rule: error.rule,
    });
    if (this.blocks.length > 2 * this.limits.recentBlocks) this.blocks = this.blocks.slice(-this.limits.recentBlocks);
  }

  private rulesPayloadObject(): { rules: readonly RuleDescription[]; rejected: RejectionView | undefined } {
    return { rules: this.fg.describeRules(), rejected: this.rejected };
  }

  private rulesPayload(): string {
    return JSON.stringify(this.rulesPayloadObject());
  }

  private broadcast(event: string, data: () => string): void {
    if (this.pages.size === 0) return;
    const json = data();
    for (const page of this.pages) page.send(event, json);
  }
}

/** Identifies one breaker across reloads that keep its rule (the engine keeps its state then too). */
function breakerKey(resource: string, rule: CircuitBreakerRule): string {
  return `${resource}\u0000${JSON.stringify(rule)}`;
}
