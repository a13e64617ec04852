import {
  RULE_KIND_NAMES,
  type BlockEvent,
  type CircuitBreakerRule,
  type CircuitState,
  type CircuitStateChangeEvent,
  type RuleDescription,
  type RuleKindKey,
} from '@floodgate/core/metrics';
import type { Floodgate, Priority, RuleIssue } from '@floodgate/core';

/** One second of one resource, as the page charts it. */
export interface SecondPoint {
  /** When the second started, in the engine clock's ms. */
  readonly t: number;
  readonly pass: number;
  readonly block: number;
  /** Calls a rule in shadow (or beyond its `enforcePercent`) let through instead of refusing them (counted while a page is open). */
  readonly wouldBlock: number;
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
  /** The rule kind that refused it (`flow`, `hotParams`, `circuitBreakers`, `authority`, `system`, `pushback`, `adaptiveThrottling`, `retryBudgets`). */
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

/** Where one page of a list is: which, of how many, and how many items in all. */
export interface PageInfo {
  /** The page, from 0. */
  readonly page: number;
  /** Pages in all (at least 1, the first one being empty when the list is). */
  readonly pages: number;
  /** Items in the whole list. */
  readonly total: number;
}

/** One charted resource. */
export interface ResourceView {
  readonly name: string;
  readonly concurrency: number;
  readonly points: readonly SecondPoint[];
  /**
   * The resource's blocks by the calls' priority since it was tracked (`Floodgate.priorityCounts()`),
   * only once a call that passed or was refused claimed a priority other than `'default'`.
   */
  readonly blocksByPriority?: Readonly<Record<Priority, number>>;
}

/**
 * What a page needs to draw itself from nothing (`api/state`, the `snapshot` event): one page of
 * the charted resources and one page of the rules, at most `pageSize` of each, the breakers
 * (at most `pageSize`, open and half-open ones first), the latest blocks.
 */
export interface Snapshot {
  readonly now: number;
  readonly intervalMs: number;
  readonly historySeconds: number;
  /** Most resources, rules and breakers in one answer. */
  readonly pageSize: number;
  readonly resources: readonly ResourceView[];
  /** Which page of the charted resources `resources` is (`?resources=<page>`). */
  readonly resourcePage: PageInfo;
  /** Tracked resources beyond `maxResources`, neither charted nor paged. */
  readonly hiddenResources: number;
  readonly breakers: readonly BreakerView[];
  /** Breakers in all (those beyond `pageSize` are not shown; open and half-open ones come first). */
  readonly breakerCount: number;
  readonly rules: readonly RuleDescription[];
  /** Which page of the rules `rules` is (`?rules=<page>`). */
  readonly rulePage: PageInfo;
  /** The rule kinds, in check order (the editor's keys). */
  readonly kinds: readonly RuleKindKey[];
  readonly blocks: readonly BlockView[];
  /** Most blocks listed. */
  readonly recentBlocks: number;
  readonly rejected: RejectionView | undefined;
}

/** What changed in one interval, for the pages watching one page of resources. */
export interface Tick {
  readonly now: number;
  /** The new seconds of the resources of the page watched. */
  readonly resources: readonly ResourceView[];
  readonly resourcePage: PageInfo;
  readonly hiddenResources: number;
  readonly breakers: readonly BreakerView[];
  readonly breakerCount: number;
  readonly blocks: readonly BlockView[];
}

/** One page of the rules (`api/rules?page=<n>`, the `rules` event for page 0). */
export interface RulesPage {
  readonly rules: readonly RuleDescription[];
  readonly rulePage: PageInfo;
  readonly rejected: RejectionView | undefined;
}

/** The bounds of a {@link LiveFeed}. */
export interface LiveFeedLimits {
  readonly intervalMs: number;
  readonly pageSize: number;
  readonly historySeconds: number;
  readonly maxResources: number;
  readonly recentBlocks: number;
  readonly transitionsPerBreaker: number;
}

/** Something that receives the feed: one connected page. */
export interface FeedSubscriber {
  /** The page of resources it watches (from 0). */
  readonly resourcePage: number;
  /** Sends one server-sent event (`data` is JSON already). */
  send(event: string, data: string): void;
}

/** The kind of each block error code, by its rule-set key, as the kinds name themselves (a new kind shows by its key). */
const KIND_BY_CODE: ReadonlyMap<string, RuleKindKey> = new Map(
  RULE_KIND_NAMES.flatMap(({ key, codes }) => codes.map((code) => [code, key] as const)),
);

/** Most breakers whose transitions are remembered (breakers of rules since removed age out). */
const MAX_BREAKERS_REMEMBERED = 1000;

interface Series {
  readonly points: SecondPoint[];
  /** The next second to read from the engine's minute window. */
  next: number;
}

/** The sampled state of one period, shared by every reader of it. */
interface View {
  readonly now: number;
  /** Every charted resource, in the order they were first seen. */
  readonly resources: readonly ResourceView[];
  readonly hiddenResources: number;
  /** The breakers shown, as JSON. */
  readonly breakers: string;
  readonly breakerCount: number;
  /** The latest blocks, as JSON. */
  readonly blocks: string;
}

/** One page of a list, as JSON, and where it is. */
interface Part {
  readonly json: string;
  readonly info: PageInfo;
}

/**
 * Parts built at most once per key (a period, or a change), shared by every reader of the key;
 * all dropped when the key changes. Bounded by what one period holds: a part per page.
 */
class PeriodMemo {
  private key: string | undefined;
  private readonly parts = new Map<string, unknown>();

  get<T>(key: string, part: string, build: () => T): T {
    if (key !== this.key) {
      this.parts.clear();
      this.key = key;
    }
    let value = this.parts.get(part) as T | undefined;
    if (value === undefined) {
      value = build();
      this.parts.set(part, value);
    }
    return value;
  }
}

/**
 * The dashboard's view of an engine over time, for every reader. While no page is connected it
 * costs nothing on the entry path: it listens only to rare events (breaker transitions, rule
 * changes and rejections) and keeps no series. While at least one page is connected, one unref'd
 * timer reads each charted resource's completed seconds from the engine's minute window
 * (backfilling the last minute when it starts) and its concurrency, listens to `block` for the
 * recent blocks, and sends the pages watching one page of resources the same JSON once per
 * interval; rule changes are sent with the next interval, once however many there were.
 *
 * Reads cost one build per period however many readers: what `api/state`, `api/rules` and a new
 * page's snapshot are made of (the sampled resources, the breakers, the rule descriptions, each
 * page of them as JSON) is built at most once per interval (per tick while pages are connected,
 * per `intervalMs` of the engine's clock otherwise, and again after a rule change) and shared.
 * Answers are bounded: at most `pageSize` resources, rules and breakers each. Memory is bounded
 * by {@link LiveFeedLimits}: at most `maxResources` series of `historySeconds` points,
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
  private stopWouldBlocks: (() => void) | undefined;
  /** Would-be blocks of the charted resources, by resource and by second (its start, engine ms), while a page is open. */
  private readonly wouldBlocks = new Map<string, Map<number, number>>();
  private readonly stopEvents: (() => void)[];
  /** Bumped by every sample and rule change: what was built before is out of date. */
  private generation = 0;
  /** Rules changed since the last tick: the pages are sent them with the next one. */
  private rulesChanged = false;
  private readonly memo = new PeriodMemo();
  private readonly kindsJson: string;

  constructor(
    private readonly fg: Floodgate,
    private readonly limits: LiveFeedLimits,
  ) {
    this.kindsJson = JSON.stringify(Object.keys(fg.getRules()));
    const changed = (): void => {
      this.generation++;
      this.rulesChanged = true;
    };
    this.stopEvents = [
      fg.on('circuitStateChange', (event) => this.recordTransition(event)),
      fg.on('rulesRejected', ({ source, issues }) => {
        this.rejected = { at: fg.clock.now(), source, issues };
        changed();
      }),
      fg.on('rulesLoaded', changed),
    ];
  }

  /** Pages connected now. */
  get pageCount(): number {
    return this.pages.size;
  }

  /** Adds a page: sends it a snapshot of its page of resources, and starts sampling if it is the first. */
  subscribe(page: FeedSubscriber): () => void {
    if (this.pages.size === 0) this.start();
    this.pages.add(page);
    page.send('snapshot', this.snapshotJson(page.resourcePage, 0));
    return () => {
      if (this.pages.delete(page) && this.pages.size === 0) this.stop();
    };
  }

  /** A {@link Snapshot} as JSON: one page of resources and one of rules (out of range: empty). */
  snapshotJson(resourcePage: number, rulePage: number): string {
    const key = this.key();
    const view = this.view(key);
    const resources = this.resourcesPart(key, view, resourcePage);
    const rules = this.rulesPart(key, rulePage);
    return jsonObject({
      now: String(view.now),
      intervalMs: String(this.limits.intervalMs),
      historySeconds: String(this.limits.historySeconds),
      pageSize: String(this.limits.pageSize),
      resources: resources.json,
      resourcePage: JSON.stringify(resources.info),
      hiddenResources: String(view.hiddenResources),
      breakers: view.breakers,
      breakerCount: String(view.breakerCount),
      rules: rules.json,
      rulePage: JSON.stringify(rules.info),
      kinds: this.kindsJson,
      blocks: view.blocks,
      recentBlocks: String(this.limits.recentBlocks),
      rejected: JSON.stringify(this.rejected),
    });
  }

  /** A {@link RulesPage} as JSON. */
  rulesJson(rulePage: number): string {
    const rules = this.rulesPart(this.key(), rulePage);
    return jsonObject({
      rules: rules.json,
      rulePage: JSON.stringify(rules.info),
      rejected: JSON.stringify(this.rejected),
    });
  }

  /**
   * One page of the names of the resources the engine tracks (`resourceNames()`), sorted, those
   * holding `query` in any letter case (all for `''`), as JSON `{ query, resources, resourcePage }`:
   * what the resource picker of the rule forms lists. The sorted names are built once per key.
   */
  resourceNamesJson(query: string, page: number): string {
    const names = this.memo.get(this.key(), 'names', () => {
      const sorted = this.fg.resourceNames().sort();
      return { sorted, folded: sorted.map((name) => name.toLowerCase()) };
    });
    const folded = query.toLowerCase();
    const matches = folded === '' ? names.sorted : names.sorted.filter((_, i) => names.folded[i]!.includes(folded));
    const [shown, info] = pageOf(matches, page, this.limits.pageSize);
    return JSON.stringify({ query, resources: shown, resourcePage: info });
  }

  /** Reads the engine once and sends every page what changed on its page of resources. Called by the timer. */
  tick(): void {
    const fresh = this.sample();
    this.generation++;
    const blocks = this.blocks.filter((block) => block.seq > this.sentBlockSeq).slice(-this.limits.recentBlocks);
    this.sentBlockSeq = this.blockSeq;
    const view = this.view(this.key());
    const blocksJson = JSON.stringify(blocks);
    const byPage = new Map<number, string>();
    for (const page of this.pages) {
      let json = byPage.get(page.resourcePage);
      if (json === undefined) {
        const [shown, info] = pageOf(view.resources, page.resourcePage, this.limits.pageSize);
        json = jsonObject({
          now: String(view.now),
          resources: JSON.stringify(
            shown.map(({ name, concurrency, blocksByPriority }) => ({
              name,
              concurrency,
              points: fresh.get(name) ?? [],
              blocksByPriority,
            })),
          ),
          resourcePage: JSON.stringify(info),
          hiddenResources: String(view.hiddenResources),
          breakers: view.breakers,
          breakerCount: String(view.breakerCount),
          blocks: blocksJson,
        });
        byPage.set(page.resourcePage, json);
      }
      page.send('tick', json);
    }
    if (this.rulesChanged) {
      this.rulesChanged = false;
      const rules = this.rulesJson(0);
      for (const page of this.pages) page.send('rules', rules);
    }
  }

  /** Disconnects nothing, but stops listening to the engine; pages should be closed first. */
  close(): void {
    this.stop();
    for (const stop of this.stopEvents) stop();
  }

  /** What was built is shared while this stays the same: per tick while sampling, else per interval of the engine's clock. */
  private key(): string {
    if (this.pages.size > 0) return String(this.generation);
    return `${this.generation}@${Math.floor(this.fg.clock.now() / this.limits.intervalMs)}`;
  }

  /** The sampled state of the key's period (sampled first when no page is connected). */
  private view(key: string): View {
    return this.memo.get(key, 'view', (): View => {
      const sampling = this.pages.size > 0;
      if (!sampling) this.sample();
      const resources = [...this.series].map(([name, series]) => ({
        name,
        concurrency: this.concurrency(name),
        points: series.points,
        blocksByPriority: this.blocksByPriority(name),
      }));
      const breakers = this.breakers();
      const view: View = {
        now: this.fg.clock.now(),
        resources,
        hiddenResources: this.hidden,
        breakers: JSON.stringify(breakers.slice(0, this.limits.pageSize)),
        breakerCount: breakers.length,
        blocks: JSON.stringify(this.blocks.slice(-this.limits.recentBlocks)),
      };
      if (!sampling) {
        this.series.clear();
        this.hidden = 0;
      }
      return view;
    });
  }

  private resourcesPart(key: string, view: View, page: number): Part {
    return this.part(key, `resources:${page}`, view.resources, page);
  }

  private rulesPart(key: string, page: number): Part {
    const rules = this.memo.get(key, 'rules', () => this.fg.describeRules());
    return this.part(key, `rules:${page}`, rules, page);
  }

  /** One page of `list` as JSON, built once per key; a page out of range is empty (and not kept). */
  private part(key: string, name: string, list: readonly unknown[], page: number): Part {
    const [shown, info] = pageOf(list, page, this.limits.pageSize);
    if (shown.length === 0) return { json: '[]', info };
    return this.memo.get(key, name, () => ({ json: JSON.stringify(shown), info }));
  }

  /** The first page arrived: backfill the last minute, then sample once per interval. */
  private start(): void {
    this.sample();
    this.generation++;
    this.stopBlocks = this.fg.on('block', (event) => this.recordBlock(event));
    this.stopWouldBlocks = this.fg.on('wouldBlock', ({ resource }) => this.recordWouldBlock(resource));
    this.timer = setInterval(() => this.tick(), this.limits.intervalMs);
    this.timer.unref();
  }

  /** The last page left: stop sampling and forget the series (they are backfilled next time). */
  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopBlocks?.();
    this.stopBlocks = undefined;
    this.stopWouldBlocks?.();
    this.stopWouldBlocks = undefined;
    this.wouldBlocks.clear();
    this.series.clear();
    this.hidden = 0;
    this.generation++;
  }

  /** Reads each charted resource's new completed seconds; returns them by resource. */
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
      const shadow = this.wouldBlocks.get(name);
      const points = this.fg.history(name, series.next).map((s): SecondPoint => ({
        t: s.startMs,
        pass: s.pass,
        block: s.block,
        wouldBlock: shadow?.get(s.startMs) ?? 0,
        error: s.error,
        rtMs: Math.round(s.avgRtMs * 10) / 10,
      }));
      if (points.length > 0) {
        series.next = points[points.length - 1]!.t + 1;
        // The seconds sent are done with: only the current one and later are still counted.
        if (shadow !== undefined) for (const t of shadow.keys()) if (t < series.next) shadow.delete(t);
        series.points.push(...points);
        const excess = series.points.length - this.limits.historySeconds;
        if (excess > 0) series.points.splice(0, excess);
      }
      fresh.set(name, points);
    }
    this.hidden = hidden;
    return fresh;
  }

  /** Counts a would-be block in its second, for a charted resource (others, hidden or untracked, are not charted). */
  private recordWouldBlock(resource: string): void {
    if (!this.series.has(resource)) return;
    let seconds = this.wouldBlocks.get(resource);
    if (seconds === undefined) this.wouldBlocks.set(resource, (seconds = new Map<number, number>()));
    const second = Math.floor(this.fg.clock.now() / 1000) * 1000;
    seconds.set(second, (seconds.get(second) ?? 0) + 1);
  }

  private concurrency(name: string): number {
    return this.fg.stats(name)?.concurrency ?? 0;
  }

  /** Blocks by priority, when a call of the resource was not `'default'` (else the page shows none). */
  private blocksByPriority(name: string): Readonly<Record<Priority, number>> | undefined {
    const counts = this.fg.priorityCounts(name);
    if (counts === undefined) return undefined;
    const { passed, blocked } = counts;
    const prioritized = passed.critical + passed.sheddable + blocked.critical + blocked.sheddable > 0;
    return prioritized ? blocked : undefined;
  }

  /** Every breaker, open and half-open ones first (in rule order otherwise). */
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
    const rank = (view: BreakerView): number => (view.state === 'closed' ? 1 : 0);
    return views.sort((a, b) => rank(a) - rank(b));
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
      kind: KIND_BY_CODE.get(error.code) ?? 'unknown',
      code: error.code,
      rule: error.rule,
    });
    if (this.blocks.length > 2 * this.limits.recentBlocks) this.blocks = this.blocks.slice(-this.limits.recentBlocks);
  }
}

/** Page `page` (from 0) of `list`, `size` per page, and where it is; out of range: empty. */
export function pageOf<T>(list: readonly T[], page: number, size: number): [readonly T[], PageInfo] {
  const info = { page, pages: Math.max(1, Math.ceil(list.length / size)), total: list.length };
  return [page < info.pages ? list.slice(page * size, (page + 1) * size) : [], info];
}

/** A JSON object from fields already written as JSON; a field written as `undefined` is left out. */
function jsonObject(fields: Readonly<Record<string, string | undefined>>): string {
  const parts: string[] = [];
  for (const [name, json] of Object.entries(fields)) if (json !== undefined) parts.push(`"${name}":${json}`);
  return `{${parts.join(',')}}`;
}

/** Identifies one breaker across reloads that keep its rule (the engine keeps its state then too). */
function breakerKey(resource: string, rule: CircuitBreakerRule): string {
  return `${resource}\u0000${JSON.stringify(rule)}`;
}
