import { AuthorityBlockError, Entry, FlowBlockError, Floodgate, RateLimit, SystemBlockError } from '@floodgate/core';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import type { BlockEvent } from '@floodgate/core/metrics';
import { complete, engineWith, hold, inbound } from './helpers';

describe('system caps', () => {
  it('refuses the inbound call that would pass maxQps in the window, whatever its resource', () => {
    const { fg } = engineWith([{ maxQps: 3 }]);
    for (const resource of ['GET /a', 'GET /b', 'POST /c']) (inbound(fg, resource) as Entry).exit();
    const refused = inbound(fg, 'GET /d');
    expect(refused).toBeInstanceOf(SystemBlockError);
    expect(refused).toMatchObject({ limit: 'maxQps', value: 3, resource: 'GET /d' });
  });

  it('tells a maxQps refusal when the window lets calls pass again', async () => {
    const { fg, clock } = engineWith([{ maxQps: 2 }]);
    (inbound(fg) as Entry).exit();
    await clock.advance(600);
    (inbound(fg) as Entry).exit();
    expect((inbound(fg) as SystemBlockError).retryAfterMs).toBe(400);
    await clock.advance(400);
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it('counts the calls a maxQps refusal would take with acquireCount', () => {
    const { fg } = engineWith([{ maxQps: 3 }]);
    (inbound(fg) as Entry).exit();
    expect(fg.tryEntry('GET /a', { inbound: true, acquireCount: 3 })).toBeInstanceOf(SystemBlockError);
    expect(fg.tryEntry('GET /a', { inbound: true, acquireCount: 2 })).toBeInstanceOf(Entry);
  });

  it('refuses the inbound call that would pass maxConcurrency, across resources, until one exits', () => {
    const { fg } = engineWith([{ maxConcurrency: 3 }]);
    const held = hold(fg, 3);
    expect(inbound(fg, 'GET /other')).toMatchObject({ limit: 'maxConcurrency', value: 3 });
    held[0]!.exit();
    expect(inbound(fg, 'GET /other')).toBeInstanceOf(Entry);
  });

  it('counts every call in flight for maxConcurrency, whatever its acquireCount', () => {
    const { fg } = engineWith([{ maxConcurrency: 1 }]);
    fg.entry('GET /a', { inbound: true, acquireCount: 0 });
    expect(fg.tryEntry('GET /a', { inbound: true, acquireCount: 0 })).toBeInstanceOf(SystemBlockError);
  });

  it('refuses while the average inbound response time of the last second is over maxAvgRtMs', async () => {
    const { fg, clock } = engineWith([{ maxAvgRtMs: 100 }]);
    await complete(fg, clock, 2, 150);
    expect(inbound(fg)).toMatchObject({ limit: 'maxAvgRtMs', value: 150 });
    await clock.advance(1000);
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it('passes at exactly maxAvgRtMs (Sentinel refuses above it)', async () => {
    const { fg, clock } = engineWith([{ maxAvgRtMs: 100 }]);
    await complete(fg, clock, 2, 100);
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it.each([
    ['maxHeapUsedBytes', 'heapUsedBytes'],
    ['maxRssBytes', 'rssBytes'],
  ] as const)('refuses every inbound call while %s is exceeded, even a lone one', (limit, signal) => {
    const { fg, probe } = engineWith([{ [limit]: 1000 }], { [signal]: 1000 });
    expect(inbound(fg)).toBeInstanceOf(Entry);
    probe.set({ [signal]: 1001 });
    expect(inbound(fg)).toMatchObject({ limit, value: 1001 });
    probe.set({ [signal]: 999 });
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it('refuses everything inbound with maxConcurrency 0', () => {
    const { fg } = engineWith([{ maxConcurrency: 0 }]);
    expect(inbound(fg)).toBeInstanceOf(SystemBlockError);
  });
});

describe('system load limits with the BBR check', () => {
  const LOADS = [
    ['maxEventLoopDelayMs', 'eventLoopDelayMs', 100, 250],
    ['maxEventLoopUtilization', 'eventLoopUtilization', 0.9, 0.99],
    ['maxCpuUsage', 'cpuUsage', 0.8, 0.95],
  ] as const;

  it.each(LOADS)(
    '%s lets a lone call through while the signal is over it (BBR passes at concurrency <= 1)',
    (limit, signal, threshold, over) => {
      const { fg } = engineWith([{ [limit]: threshold }], { [signal]: over });
      const first = inbound(fg) as Entry;
      expect(inbound(fg)).toBeInstanceOf(Entry); // one call in flight: BBR needs more than one
      first.exit();
    },
  );

  it.each(LOADS)(
    '%s refuses once inbound calls in flight pass what the process completes (BBR fails)',
    async (limit, signal, threshold, over) => {
      const { fg, clock, probe } = engineWith([{ [limit]: threshold }]);
      await complete(fg, clock, 20, 200); // 20 completions in one second, 200 ms each: 20 × 200 / 1000 = 4 in flight
      probe.set({ [signal]: over });
      hold(fg, 4);
      expect(inbound(fg)).toBeInstanceOf(Entry); // 4 in flight: not more than 4
      expect(inbound(fg)).toMatchObject({ limit, value: over }); // 5 in flight > 4
    },
  );

  it.each(LOADS)('%s admits any concurrency while the signal is at or under it', async (limit, signal, threshold) => {
    const { fg, clock } = engineWith([{ [limit]: threshold }], { [signal]: threshold });
    await complete(fg, clock, 1, 1000); // BBR would allow only 1 in flight
    hold(fg, 50);
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it('reads the best completion rate of the last minute, not only of the last second', async () => {
    const { fg, clock, probe } = engineWith([{ maxCpuUsage: 0.5 }]);
    await complete(fg, clock, 20, 100); // 20 in one second
    await clock.advance(30_000);
    await complete(fg, clock, 1, 100); // the least RT of the last second: 100 ms
    probe.set({ cpuUsage: 0.9 });
    hold(fg, 2); // 20 × 100 / 1000 = 2
    expect(inbound(fg)).toBeInstanceOf(Entry);
    expect(inbound(fg)).toBeInstanceOf(SystemBlockError);
  });

  it('takes the least response time as 5 s when nothing completed in the last second (Sentinel statisticMaxRt)', async () => {
    const { fg, clock, probe } = engineWith([{ maxEventLoopDelayMs: 50 }]);
    await complete(fg, clock, 2, 10); // best second: 2 completions
    await clock.advance(2000);
    probe.set({ eventLoopDelayMs: 500 });
    hold(fg, 10); // 2 × 5000 / 1000 = 10
    expect(inbound(fg)).toBeInstanceOf(Entry);
    expect(inbound(fg)).toBeInstanceOf(SystemBlockError);
  });

  it('refuses a second call in flight when nothing has ever completed and the signal is over', () => {
    const { fg } = engineWith([{ maxEventLoopUtilization: 0.5 }], { eventLoopUtilization: 1 });
    inbound(fg);
    inbound(fg);
    expect(inbound(fg)).toBeInstanceOf(SystemBlockError);
  });
});

describe('system rules on the engine', () => {
  it('leaves calls that are not inbound alone', () => {
    const { fg } = engineWith([{ maxConcurrency: 0 }]);
    expect(fg.tryEntry('GET /a')).toBeInstanceOf(Entry);
  });

  it('checks resources with rules of their own and past the resource cap', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const fg = new Floodgate({ clock: new ManualClock(), probe: new ManualProbe(), maxResources: 1 });
      fg.loadRules({ flow: [{ resource: 'GET /limited', threshold: 100 }], system: [{ maxConcurrency: 1 }] });
      fg.entry('GET /limited', { inbound: true });
      expect(fg.tryEntry('GET /untracked', { inbound: true })).toBeInstanceOf(SystemBlockError);
      expect(fg.resourceNames()).toEqual(['GET /limited']);
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining('at most 1 resources'),
        expect.objectContaining({ code: 'FLOODGATE_MAX_RESOURCES' }),
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('runs after authority rules and before flow rules', () => {
    const { fg } = engineWith([{ maxConcurrency: 0 }]);
    fg.loadRules({
      authority: [{ resource: 'GET /a', strategy: 'deny', origins: ['evil'] }],
      flow: [{ resource: 'GET /a', threshold: 0 }],
    });
    expect(fg.tryEntry('GET /a', { inbound: true, origin: 'evil' })).toBeInstanceOf(AuthorityBlockError);
    expect(fg.tryEntry('GET /a', { inbound: true })).toBeInstanceOf(SystemBlockError);
    expect(fg.tryEntry('GET /a')).toBeInstanceOf(FlowBlockError);
  });

  it('does not count a call a later rule refuses as passed or in flight', () => {
    const { fg } = engineWith([{ maxQps: 1, maxConcurrency: 1 }]);
    fg.loadFlowRules([{ resource: 'GET /closed', threshold: 0 }]);
    for (let i = 0; i < 5; i++) expect(inbound(fg, 'GET /closed')).toBeInstanceOf(FlowBlockError);
    expect(inbound(fg, 'GET /open')).toBeInstanceOf(Entry);
    expect(fg.inboundStats().lastSecond).toMatchObject({ pass: 1, block: 5 });
  });

  it('keeps the least threshold of each limit over every rule, and names the rule that set it', () => {
    const loose = { maxConcurrency: 5, maxQps: 2 };
    const tight = { maxConcurrency: 1, retryAfterMs: 3000 };
    const { fg } = engineWith([loose, tight]);
    inbound(fg);
    const refused = inbound(fg) as SystemBlockError;
    expect(refused).toMatchObject({
      limit: 'maxConcurrency',
      rule: { maxConcurrency: 1, retryAfterMs: 3000 },
      retryAfterMs: 3000,
    });
  });

  it('gives the rule’s retry hint to refusals other than maxQps', () => {
    const { fg } = engineWith([{ maxHeapUsedBytes: 1 }], { heapUsedBytes: 2 });
    expect((inbound(fg) as SystemBlockError).retryAfterMs).toBe(1000);
  });

  it('stops refusing when its rules are removed', () => {
    const { fg } = engineWith([{ maxConcurrency: 0 }]);
    fg.loadSystemRules([]);
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it('takes declared system rules, loaded ones taking precedence', () => {
    const fg = new Floodgate({ clock: new ManualClock(), probe: new ManualProbe() });
    const withdraw = fg.declareRules({ system: [{ maxConcurrency: 0 }] });
    expect(inbound(fg)).toBeInstanceOf(SystemBlockError);
    fg.loadSystemRules([{ maxConcurrency: 10 }]);
    expect(inbound(fg)).toBeInstanceOf(Entry);
    fg.loadSystemRules([]);
    expect(inbound(fg)).toBeInstanceOf(SystemBlockError);
    withdraw();
    expect(inbound(fg)).toBeInstanceOf(Entry);
  });

  it('lists system rules with no resource', () => {
    const { fg } = engineWith([{ maxQps: 10 }]);
    expect(fg.describeRules()).toEqual([
      expect.objectContaining({
        kind: 'system',
        resource: '',
        rule: { maxQps: 10, retryAfterMs: 1000 },
        inForce: true,
      }),
    ]);
  });

  it("emits block events of kind 'system' and counts the block on the resource and the inbound statistics", () => {
    const { fg } = engineWith([{ maxConcurrency: 0 }]);
    const events: BlockEvent[] = [];
    fg.on('block', (event) => events.push(event));
    inbound(fg, 'GET /a');
    expect(events.map((e) => [e.resource, e.error.kind, e.error.code])).toEqual([
      ['GET /a', 'system', 'ERR_SYSTEM_BLOCKED'],
    ]);
    expect(fg.stats('GET /a')!.lastSecond.block).toBe(1);
    expect(fg.inboundStats().lastSecond.block).toBe(1);
  });

  it('guards decorated methods given inbound: true', () => {
    const { fg } = engineWith([{ maxConcurrency: 0 }]);
    class Handler {
      @RateLimit({ floodgate: fg, resource: 'Handler.onMessage', threshold: 100, inbound: true })
      onMessage(): string {
        return 'handled';
      }
      @RateLimit({ floodgate: fg, resource: 'Handler.internal', threshold: 100 })
      internal(): string {
        return 'handled';
      }
    }
    expect(() => new Handler().onMessage()).toThrow(SystemBlockError);
    expect(new Handler().internal()).toBe('handled');
  });
});

describe('SystemBlockError', () => {
  const rule = { maxQps: 10.7, retryAfterMs: 1000 };
  const error = new SystemBlockError({ resource: 'GET /a', rule, limit: 'maxQps', value: 11, retryAfterMs: 300 });

  it('is a 503-kind block with a stable code', () => {
    expect(error).toMatchObject({
      code: 'ERR_SYSTEM_BLOCKED',
      kind: 'system',
      refusal: 'capacity',
      name: 'SystemBlockError',
    });
  });

  it('names the limit, its threshold and what was measured', () => {
    expect(error.message).toBe('System protection refused "GET /a": maxQps 10.7, measured 11');
  });

  it("has a 'system' quota for maxQps refusals only", () => {
    expect(error.quota()).toEqual({ name: 'system', quota: 10, windowSeconds: 1 });
    expect(
      new SystemBlockError({
        resource: 'r',
        rule: { maxCpuUsage: 0.5, retryAfterMs: 1000 },
        limit: 'maxCpuUsage',
        value: 0.9,
      }).quota(),
    ).toBeUndefined();
  });

  it('serialises its limit and value', () => {
    expect(error.toJSON()).toMatchObject({
      code: 'ERR_SYSTEM_BLOCKED',
      limit: 'maxQps',
      value: 11,
      retryAfterMs: 300,
      rule,
    });
  });
});
