import { Entry, Floodgate, ManualClock } from '@floodgate/core';
import { LiveFeed, type LiveFeedLimits, type Snapshot, type Tick } from '../../packages/dashboard/src/live-feed';

const LIMITS: LiveFeedLimits = {
  intervalMs: 60_000,
  historySeconds: 120,
  maxResources: 10,
  recentBlocks: 5,
  transitionsPerBreaker: 3,
};

/** A page that keeps what it was sent. */
class Page {
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
    expect(points.at(-1)).toEqual({ t: 189_000, pass: 1, block: 0, error: 0, rtMs: 0 });
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
          { t: 100_000, pass: 3, block: 0, error: 0, rtMs: 0 },
          { t: 101_000, pass: 3, block: 0, error: 0, rtMs: 0 },
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
    const points = live.snapshot().resources[0]!.points;
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
    expect(live.snapshot().blocks).toEqual([]);
    const page = new Page();
    const leave = live.subscribe(page);
    for (let i = 0; i < 12; i++) fg.tryEntry('api', { origin: `o${i}` });
    live.tick();
    expect(page.last<Tick>('tick').blocks.map((b) => b.origin)).toEqual(['o7', 'o8', 'o9', 'o10', 'o11']);
    expect(live.snapshot().blocks.map((b) => b.origin)).toEqual(['o7', 'o8', 'o9', 'o10', 'o11']);
    expect(live.snapshot().blocks[0]).toMatchObject({
      resource: 'api',
      kind: 'flow',
      code: 'ERR_FLOW_BLOCKED',
      rule: expect.objectContaining({ threshold: 0 }),
    });
    live.tick();
    expect(page.last<Tick>('tick').blocks).toEqual([]);
    leave();
    fg.tryEntry('api', { origin: 'after' });
    expect(live.snapshot().blocks.map((b) => b.origin)).not.toContain('after');
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
    const [breaker] = live.snapshot().breakers;
    expect(breaker).toMatchObject({ resource: 'api', state: 'open' });
    expect(breaker!.transitions).toEqual([
      { at: 101_000, from: 'open', to: 'halfOpen', value: undefined },
      { at: 101_000, from: 'halfOpen', to: 'open', value: 1 },
    ]);
  });

  it('sends pages the rules with their sources when they change, and the last rejection', () => {
    const live = feed();
    const page = new Page();
    live.subscribe(page);
    fg.loadFlowRules([{ resource: 'api', threshold: 1 }], { source: 'file' });
    expect(page.last<Snapshot>('rules').rules).toEqual([
      expect.objectContaining({ resource: 'api', source: 'file', layer: 'loaded' }),
    ]);
    expect(() => fg.loadFlowRules([{ resource: 'api', threshold: -1 }], { source: 'redis' })).toThrow();
    expect(page.last<Snapshot>('rules').rejected).toEqual({
      at: 100_000,
      source: 'redis',
      issues: [{ path: 'flow[0].threshold', message: 'must be a finite number >= 0, got -1' }],
    });
  });
});
