import { Entry, Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { LiveFeed, type LiveFeedLimits, type Snapshot, type Tick } from '../../packages/dashboard/src/live-feed';

const LIMITS: LiveFeedLimits = {
  intervalMs: 60_000,
  pageSize: 50,
  historySeconds: 120,
  maxResources: 10,
  recentBlocks: 5,
  transitionsPerBreaker: 3,
};

/** A page that keeps what it was sent. */
class Page {
  constructor(readonly resourcePage = 0) {}
  readonly events: { event: string; data: any }[] = [];
  send(event: string, data: string): void {
    this.events.push({ event, data: JSON.parse(data) });
  }
  last<T>(event: string): T {
    return this.events.filter((e) => e.event === event).at(-1)!.data as T;
  }
}

let clock: ManualClock;
let fg: Floodgate;
const feeds: LiveFeed[] = [];

beforeEach(() => {
  clock = new ManualClock(100_000);
  fg = new Floodgate({ clock });
});
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.close();
});

/** What `api/state` answers (page 0 of the resources and of the rules). */
function snapshot(live: LiveFeed, resourcePage = 0, rulePage = 0): Snapshot {
  return JSON.parse(live.snapshotJson(resourcePage, rulePage)) as Snapshot;
}

function feed(limits: Partial<LiveFeedLimits> = {}): LiveFeed {
  const made = new LiveFeed(fg, { ...LIMITS, ...limits });
  feeds.push(made);
  return made;
}

async function traffic(resource: string, seconds: number, perSecond = 1): Promise<void> {
  for (let s = 0; s < seconds; s++) {
    for (let i = 0; i < perSecond; i++) {
      const entry = fg.tryEntry(resource);
      if (entry instanceof Entry) entry.exit();
    }
    await clock.advance(1000);
  }
}

describe('LiveFeed', () => {
  it('backfills the last minute from the engine when the first page connects', async () => {
    await traffic('api', 90);
    const page = new Page();
    feed().subscribe(page);
    const points = page.last<Snapshot>('snapshot').resources[0]!.points;
    expect(points).toHaveLength(60);
    expect(points.at(-1)).toEqual({ t: 189_000, pass: 1, block: 0, wouldBlock: 0, error: 0, rtMs: 0 });
  });

  it('sends each tick only the seconds completed since the last one', async () => {
    const live = feed();
    const page = new Page();
    live.subscribe(page);
    await traffic('api', 2, 3);
    live.tick();
    expect(page.last<Tick>('tick').resources).toEqual([
      {
        name: 'api',
        concurrency: 0,
        points: [
          { t: 100_000, pass: 3, block: 0, wouldBlock: 0, error: 0, rtMs: 0 },
          { t: 101_000, pass: 3, block: 0, wouldBlock: 0, error: 0, rtMs: 0 },
        ],
      },
    ]);
    live.tick();
    expect(page.last<Tick>('tick').resources).toEqual([{ name: 'api', concurrency: 0, points: [] }]);
  });

  it('keeps at most historySeconds points per resource', async () => {
    const live = feed({ historySeconds: 60 });
    const page = new Page();
    live.subscribe(page);
    for (let i = 0; i < 3; i++) {
      await traffic('api', 40);
      live.tick();
    }
    const points = snapshot(live).resources[0]!.points;
    expect(points).toHaveLength(60);
    expect(points.at(-1)!.t).toBe(219_000);
  });

  it('shows at most maxResources resources and counts the others', async () => {
    const live = feed({ maxResources: 3 });
    for (let i = 0; i < 5; i++) fg.tryEntry(`r${i}`);
    const page = new Page();
    live.subscribe(page);
    const snapshot = page.last<Snapshot>('snapshot');
    expect(snapshot.resources.map((r) => r.name)).toEqual(['r0', 'r1', 'r2']);
    expect(snapshot.hiddenResources).toBe(2);
  });

  it('records blocks only while a page is connected, and sends and keeps at most recentBlocks of them', async () => {
    fg.loadFlowRules([{ resource: 'api', threshold: 0 }]);
    const live = feed();
    fg.tryEntry('api');
    expect(snapshot(live).blocks).toEqual([]);
    const page = new Page();
    const leave = live.subscribe(page);
    for (let i = 0; i < 12; i++) fg.tryEntry('api', { origin: `o${i}` });
    live.tick();
    expect(page.last<Tick>('tick').blocks.map((b) => b.origin)).toEqual(['o7', 'o8', 'o9', 'o10', 'o11']);
    expect(snapshot(live).blocks.map((b) => b.origin)).toEqual(['o7', 'o8', 'o9', 'o10', 'o11']);
    expect(snapshot(live).blocks[0]).toMatchObject({
      resource: 'api',
      kind: 'flow',
      code: 'ERR_FLOW_BLOCKED',
      rule: expect.objectContaining({ threshold: 0 }),
    });
    live.tick();
    expect(page.last<Tick>('tick').blocks).toEqual([]);
    leave();
    fg.tryEntry('api', { origin: 'after' });
    expect(snapshot(live).blocks.map((b) => b.origin)).not.toContain('after');
  });

  it('keeps no series once the last page leaves', async () => {
    const live = feed();
    const leave = live.subscribe(new Page());
    await traffic('api', 2);
    live.tick();
    leave();
    expect(live.pageCount).toBe(0);
    expect((live as unknown as { series: Map<string, unknown> }).series.size).toBe(0);
  });

  it('remembers each breaker’s last transitions with engine time, at most transitionsPerBreaker', async () => {
    const live = feed({ transitionsPerBreaker: 2 });
    fg.loadCircuitBreakerRules([
      { resource: 'api', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const fail = (): void => {
      const entry = fg.entry('api');
      entry.traceError(new Error('x'));
      entry.exit();
    };
    fail();
    await clock.advance(1000);
    fail();
    const [breaker] = snapshot(live).breakers;
    expect(breaker).toMatchObject({ resource: 'api', state: 'open' });
    expect(breaker!.transitions).toEqual([
      { at: 101_000, from: 'open', to: 'halfOpen', value: undefined },
      { at: 101_000, from: 'halfOpen', to: 'open', value: 1 },
    ]);
  });

  it('sends pages the rules with their sources with the next tick after they change, and the last rejection', () => {
    const live = feed();
    const page = new Page();
    live.subscribe(page);
    fg.loadFlowRules([{ resource: 'api', threshold: 1 }], { source: 'file' });
    expect(page.events.filter((e) => e.event === 'rules')).toEqual([]);
    live.tick();
    expect(page.last<Snapshot>('rules').rules).toEqual([
      expect.objectContaining({ resource: 'api', source: 'file', layer: 'loaded' }),
    ]);
    expect(() => fg.loadFlowRules([{ resource: 'api', threshold: -1 }], { source: 'redis' })).toThrow();
    live.tick();
    expect(page.last<Snapshot>('rules').rejected).toEqual({
      at: 100_000,
      source: 'redis',
      issues: [{ path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' }],
    });
  });

  it('builds what readers get once per interval, however many read, and again after a rule change', async () => {
    for (let i = 0; i < 30; i++) fg.tryEntry(`r${i}`);
    fg.loadFlowRules([{ resource: 'r0', threshold: 100 }]);
    const live = feed({ intervalMs: 1000 });
    const describe = jest.spyOn(fg, 'describeRules');
    const history = jest.spyOn(fg, 'history');
    const answers = new Set<string>();
    for (let reader = 0; reader < 200; reader++) answers.add(live.snapshotJson(0, 0));
    expect(answers.size).toBe(1);
    expect(describe).toHaveBeenCalledTimes(1);
    expect(history).toHaveBeenCalledTimes(10); // the charted resources, once
    fg.loadFlowRules([{ resource: 'r0', threshold: 200 }]);
    for (let reader = 0; reader < 200; reader++) live.snapshotJson(0, 0);
    expect(describe).toHaveBeenCalledTimes(2);
    await clock.advance(1000);
    for (let reader = 0; reader < 200; reader++) live.snapshotJson(0, 0);
    expect(describe).toHaveBeenCalledTimes(3);
    expect(history).toHaveBeenCalledTimes(30);
  });

  it('answers at most pageSize resources, rules and breakers, whatever the engine holds', () => {
    const big = new Floodgate({ clock });
    const names = Array.from({ length: 6000 }, (_, i) => `GET /api/resource-${i}`);
    big.loadRules({
      flow: names.slice(0, 4000).map((resource) => ({ resource, threshold: 1e9 })),
      circuitBreakers: names
        .slice(0, 400)
        .map((resource) => ({ resource, strategy: 'errorRatio' as const, threshold: 0.9, retryTimeoutMs: 5000 })),
    });
    for (const name of names) big.tryEntry(name);
    const live = new LiveFeed(big, { ...LIMITS, maxResources: 200, pageSize: 50 });
    feeds.push(live);
    const json = live.snapshotJson(0, 0);
    const state = JSON.parse(json) as Snapshot;
    expect(state.resources).toHaveLength(50);
    expect(state.resourcePage).toEqual({ page: 0, pages: 4, total: 200 });
    expect(state.hiddenResources).toBe(5800);
    expect(state.rules).toHaveLength(50);
    expect(state.rulePage).toEqual({ page: 0, pages: 88, total: 4400 });
    expect(state.breakers).toHaveLength(50);
    expect(state.breakerCount).toBe(400);
    expect(json.length).toBeLessThan(100_000);
  });

  it('pages every rule and every charted resource exactly once, and answers a page past the last empty', () => {
    for (let i = 0; i < 23; i++) fg.tryEntry(`r${i}`);
    fg.loadFlowRules(Array.from({ length: 23 }, (_, i) => ({ resource: `r${i}`, threshold: i })));
    const live = feed({ maxResources: 20, pageSize: 7 });
    const first = snapshot(live);
    const rules = [];
    const resources = [];
    for (let page = 0; page < first.rulePage.pages; page++) rules.push(...snapshot(live, 0, page).rules);
    for (let page = 0; page < first.resourcePage.pages; page++) resources.push(...snapshot(live, page).resources);
    expect(rules.map((d) => d.rule)).toEqual(fg.describeRules().map((d) => d.rule));
    expect(resources.map((r) => r.name)).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
    expect(snapshot(live, 3, 4)).toMatchObject({
      resources: [],
      resourcePage: { page: 3, pages: 3, total: 20 },
      rules: [],
      rulePage: { page: 4, pages: 4, total: 23 },
    });
    expect(JSON.parse(live.rulesJson(3))).toMatchObject({ rules: [expect.anything(), expect.anything()] });
  });

  it('sends each page the new seconds of the page of resources it watches', async () => {
    const live = feed({ pageSize: 2 });
    for (const name of ['a', 'b', 'c']) fg.tryEntry(name);
    const [first, second] = [new Page(0), new Page(1)];
    live.subscribe(first);
    live.subscribe(second);
    expect(second.last<Snapshot>('snapshot').resources.map((r) => r.name)).toEqual(['c']);
    await traffic('c', 1);
    live.tick();
    expect(first.last<Tick>('tick').resources.map((r) => r.name)).toEqual(['a', 'b']);
    expect(second.last<Tick>('tick')).toMatchObject({
      resources: [{ name: 'c', points: [{ t: 100_000, pass: 2 }] }],
      resourcePage: { page: 1, pages: 2, total: 3 },
    });
  });

  it('lists open breakers before closed ones', () => {
    fg.loadCircuitBreakerRules(
      ['a', 'b', 'c'].map((resource) => ({
        resource,
        strategy: 'errorCount' as const,
        threshold: 0,
        minRequestAmount: 1,
        retryTimeoutMs: 1000,
      })),
    );
    const entry = fg.entry('c');
    entry.traceError(new Error('x'));
    entry.exit();
    const live = feed({ pageSize: 2 });
    expect(snapshot(live)).toMatchObject({
      breakers: [
        { resource: 'c', state: 'open' },
        { resource: 'a', state: 'closed' },
      ],
      breakerCount: 3,
    });
  });

  it('lists the resources seen for the picker, sorted, filtered in any letter case, a page at a time', () => {
    for (const name of ['GET /users/:id', 'POST /orders', 'GET /Users/me', 'GET /health']) fg.tryEntry(name);
    const live = feed({ pageSize: 2 });
    const names = (query: string, page: number) => JSON.parse(live.resourceNamesJson(query, page));
    expect(names('', 0)).toEqual({
      query: '',
      resources: ['GET /Users/me', 'GET /health'],
      resourcePage: { page: 0, pages: 2, total: 4 },
    });
    expect(names('USERS', 0).resources).toEqual(['GET /Users/me', 'GET /users/:id']);
    expect(names('users', 1)).toMatchObject({ resources: [], resourcePage: { page: 1, pages: 1, total: 2 } });
    expect(names('<img', 0).resources).toEqual([]);
  });

  it('builds the sorted names once per period, and sees a new resource in the next one', async () => {
    fg.tryEntry('b');
    const live = feed({ intervalMs: 1000 });
    const read = jest.spyOn(fg, 'resourceNames');
    live.resourceNamesJson('', 0);
    live.resourceNamesJson('b', 0);
    expect(read).toHaveBeenCalledTimes(1);
    fg.tryEntry('a');
    await clock.advance(1000);
    expect(JSON.parse(live.resourceNamesJson('', 0)).resources).toEqual(['a', 'b']);
  });
});
