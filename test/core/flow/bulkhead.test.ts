import { Floodgate, FlowBlockError, RuleValidationError, type Entry, type Priority } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { sleepOnlyClock, throwingScheduleClock } from '../../support/own-clocks';

const BULKHEAD: FlowRuleOptions = {
  resource: 'r',
  metric: 'concurrency',
  threshold: 2,
  maxQueueLength: 2,
  maxQueueingTimeMs: 1000,
};

function engineWith(rules: FlowRuleOptions[]): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock();
  const fg = new Floodgate({ clock });
  fg.loadFlowRules(rules);
  return { fg, clock };
}

/** Lets promise continuations run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Enters (with an abort signal or a priority, if given) and records, in order, which calls were admitted or refused. */
function tracked(
  fg: Floodgate,
  log: string[],
  name: string,
  options?: { readonly signal?: AbortSignal; readonly priority?: Priority },
): Promise<Entry | undefined> {
  return fg.enter('r', options).then(
    (entry) => {
      log.push(`${name}:in`);
      return entry;
    },
    (error: unknown) => {
      log.push(`${name}:${(error as { code?: string }).code ?? 'aborted'}`);
      return undefined;
    },
  );
}

describe('concurrency rules with a queue (bulkheads)', () => {
  it('queues calls beyond the threshold and admits them in arrival order as calls exit', async () => {
    const { fg } = engineWith([BULKHEAD]);
    const log: string[] = [];
    const a = await fg.enter('r');
    const b = await fg.enter('r');
    const c = tracked(fg, log, 'c');
    const d = tracked(fg, log, 'd');
    await flush();
    expect(log).toEqual([]);
    b.exit();
    await flush();
    expect(log).toEqual(['c:in']);
    a.exit();
    await flush();
    expect(log).toEqual(['c:in', 'd:in']);
    (await c)!.exit();
    (await d)!.exit();
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('hands the freed slot to the waiter, so a newcomer cannot take it in between', async () => {
    const { fg } = engineWith([BULKHEAD]);
    const log: string[] = [];
    const a = await fg.enter('r');
    await fg.enter('r');
    const c = tracked(fg, log, 'c');
    a.exit();
    // Synchronously after the exit, before the waiter's continuation runs.
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
    const e = tracked(fg, log, 'e');
    await flush();
    expect(log).toEqual(['c:in']);
    (await c)!.exit();
    await flush();
    expect(log).toEqual(['c:in', 'e:in']);
    await e;
  });

  it('refuses a waiter at maxQueueingTimeMs, with no retryAfterMs', async () => {
    const { fg, clock } = engineWith([BULKHEAD]);
    await fg.enter('r');
    await fg.enter('r');
    const waiting = fg.enter('r');
    let settled = false;
    void waiting.then(
      () => (settled = true),
      () => (settled = true),
    );
    await clock.advance(999);
    expect(settled).toBe(false);
    await clock.advance(1);
    await expect(waiting).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: undefined });
    expect(fg.stats('r')!.concurrency).toBe(2);
    expect(fg.stats('r')!.lastSecond.block).toBe(1);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('keeps its queue deadlines on a clock of its own without schedule (through sleep)', async () => {
    const manual = new ManualClock();
    const clock = sleepOnlyClock(manual);
    const fg = new Floodgate({ clock });
    fg.loadFlowRules([BULKHEAD]);
    const a = await fg.enter('r');
    await fg.enter('r');
    const handed = fg.enter('r');
    const late = fg.enter('r').catch((error: unknown) => error);
    await flush();
    expect(manual.pendingSleeps).toBe(2);
    a.exit();
    await handed;
    expect(manual.pendingSleeps).toBe(1);
    await manual.advance(999);
    await flush();
    expect(manual.pendingSleeps).toBe(1);
    await manual.advance(1);
    expect(await late).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(manual.pendingSleeps).toBe(0);
  });

  it('refuses a waiter with the error of a clock whose schedule throws, leaving nothing queued or held', async () => {
    const manual = new ManualClock();
    const broken = throwingScheduleClock(manual, 'clock broke');
    const fg = new Floodgate({ clock: broken });
    fg.loadFlowRules([{ ...BULKHEAD, threshold: 1 }]);
    const held = await fg.enter('r');
    await expect(fg.enter('r')).rejects.toThrow('clock broke');
    held.exit();
    expect(fg.stats('r')!.concurrency).toBe(0);
    (await fg.enter('r')).exit();
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('refuses at once when maxQueueLength calls wait already', async () => {
    const { fg, clock } = engineWith([BULKHEAD]);
    await fg.enter('r');
    await fg.enter('r');
    void fg.enter('r').catch(() => undefined);
    void fg.enter('r').catch(() => undefined);
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(clock.pendingSleeps).toBe(2);
    await clock.advance(1000);
  });

  it('never queues entry() and tryEntry(): they refuse at once', async () => {
    const { fg, clock } = engineWith([BULKHEAD]);
    fg.entry('r');
    fg.entry('r');
    expect(() => fg.entry('r')).toThrow(FlowBlockError);
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('removes an aborted waiter from the queue, so the next one gets the slot', async () => {
    const { fg, clock } = engineWith([BULKHEAD]);
    const log: string[] = [];
    const a = await fg.enter('r');
    await fg.enter('r');
    const controller = new AbortController();
    const c = tracked(fg, log, 'c', { signal: controller.signal });
    const d = tracked(fg, log, 'd');
    controller.abort(new Error('gone'));
    await c;
    a.exit();
    await d;
    expect(log).toEqual(['c:aborted', 'd:in']);
    expect(fg.stats('r')!.concurrency).toBe(2);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('gives the slot back when a later check refuses a call that took it (refund)', () => {
    const { fg } = engineWith([BULKHEAD, { resource: 'r', metric: 'qps', threshold: 1 }]);
    fg.entry('r');
    expect(fg.tryEntry('r')).toMatchObject({ rule: { metric: 'qps' } });
    fg.loadFlowRules([BULKHEAD, { resource: 'r', metric: 'qps', threshold: 1 }]);
    // The refused call's slot was given back: one slot is still free.
    fg.loadFlowRules([BULKHEAD]);
    expect(fg.tryEntry('r')).not.toBeInstanceOf(FlowBlockError);
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
  });

  it('takes a waiter refused by a later check out of the queue, so no slot goes to it', async () => {
    const { fg, clock } = engineWith([BULKHEAD, { resource: 'r', metric: 'qps', threshold: 3 }]);
    const log: string[] = [];
    const a = await fg.enter('r');
    const b = await fg.enter('r');
    const c = tracked(fg, log, 'c'); // queued, and the third pass of the qps rule
    await expect(fg.enter('r')).rejects.toMatchObject({ rule: { metric: 'qps' } }); // queued, then refused
    a.exit();
    await c;
    b.exit();
    await clock.advance(1000);
    expect(log).toEqual(['c:in']);
    // c holds one slot; the refused call holds none.
    expect(fg.tryEntry('r')).not.toBeInstanceOf(FlowBlockError);
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('wakes the next waiter when an admitted call is cancelled', async () => {
    const { fg } = engineWith([BULKHEAD]);
    const log: string[] = [];
    const a = await fg.enter('r');
    await fg.enter('r');
    const c = tracked(fg, log, 'c');
    a.cancel();
    await c;
    expect(log).toEqual(['c:in']);
  });

  it('keeps its waiters across a reload that changes the bounds, refusing the newest beyond a smaller queue', async () => {
    const { fg } = engineWith([{ ...BULKHEAD, maxQueueLength: 3 }]);
    const log: string[] = [];
    const a = await fg.enter('r');
    await fg.enter('r');
    const c = tracked(fg, log, 'c');
    const d = tracked(fg, log, 'd');
    const e = tracked(fg, log, 'e');
    fg.loadFlowRules([{ ...BULKHEAD, maxQueueLength: 1 }]);
    await Promise.all([d, e]);
    expect(log).toEqual(['e:ERR_FLOW_BLOCKED', 'd:ERR_FLOW_BLOCKED']);
    a.exit();
    await c;
    expect(log).toEqual(['e:ERR_FLOW_BLOCKED', 'd:ERR_FLOW_BLOCKED', 'c:in']);
  });

  it('admits waiters a larger threshold makes room for at its reload', async () => {
    const { fg } = engineWith([BULKHEAD]);
    const log: string[] = [];
    await fg.enter('r');
    await fg.enter('r');
    const c = tracked(fg, log, 'c');
    fg.loadFlowRules([{ ...BULKHEAD, threshold: 3 }]);
    await c;
    expect(log).toEqual(['c:in']);
  });

  it('refuses its waiters when the rule is removed, and counts nothing more', async () => {
    const { fg } = engineWith([BULKHEAD]);
    const log: string[] = [];
    const a = await fg.enter('r');
    await fg.enter('r');
    const c = tracked(fg, log, 'c');
    fg.loadFlowRules([]);
    await c;
    expect(log).toEqual(['c:ERR_FLOW_BLOCKED']);
    a.exit();
    expect(fg.stats('r')!.concurrency).toBe(1);
  });

  it('runs queued run() calls as slots free up', async () => {
    const { fg, clock } = engineWith([BULKHEAD]);
    const runs = [0, 1, 2, 3, 4].map((i) => fg.run('r', () => clock.sleep(10).then(() => i)));
    const settled = Promise.allSettled(runs);
    for (let i = 0; i < 4; i++) await clock.advance(10);
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('does not add a pacing wait already spent in the queue (a throttle rule beside it)', async () => {
    const { fg, clock } = engineWith([
      { ...BULKHEAD, threshold: 1 },
      { resource: 'r', behavior: 'throttle', threshold: 10 },
    ]);
    const log: string[] = [];
    const a = await fg.enter('r');
    const b = tracked(fg, log, 'b'); // queued, its pacing slot due at 100 ms
    await clock.advance(150);
    a.exit();
    await b;
    expect(log).toEqual(['b:in']);
    expect(clock.now()).toBe(150);
  });

  it('validates its fields by path', () => {
    const issues = (rules: FlowRuleOptions[]): unknown => {
      try {
        new Floodgate().loadFlowRules(rules);
      } catch (error) {
        return (error as RuleValidationError).issues;
      }
      return [];
    };
    expect(
      issues([
        { resource: 'a', threshold: 1, maxQueueLength: 1 },
        { resource: 'b', metric: 'concurrency', behavior: 'adaptive', threshold: 3, maxQueueLength: 1 },
        { resource: 'c', metric: 'concurrency', threshold: 1, maxQueueLength: 1.5 },
        { resource: 'd', metric: 'concurrency', threshold: 1, maxQueueLength: 1, limitOrigin: 'other' },
        { resource: 'e', metric: 'concurrency', threshold: 1, maxQueueLength: 1, strategy: 'relate', refResource: 'x' },
        { resource: 'f', metric: 'concurrency', threshold: 2, maxQueueLength: 1, partitions: { critical: 0.5 } },
      ]),
    ).toEqual([
      {
        path: 'flow[0].maxQueueLength',
        message: "applies to concurrency rules with behavior 'reject' only, got metric 'qps' and behavior 'reject'",
      },
      {
        path: 'flow[1].maxQueueLength',
        message:
          "applies to concurrency rules with behavior 'reject' only, got metric 'concurrency' and behavior 'adaptive'",
      },
      { path: 'flow[2].maxQueueLength', message: expect.stringContaining('got 1.5') },
      { path: 'flow[3].maxQueueLength', message: "does not apply to limitOrigin 'other' (one queue per rule)" },
      { path: 'flow[4].maxQueueLength', message: expect.stringContaining("applies to strategy 'direct' only") },
      {
        path: 'flow[5].maxQueueLength',
        message: 'does not combine with partitions (one queue, not one per priority)',
      },
    ]);
  });

  it('shows its fields in getRules() and describeRules(), maxQueueingTimeMs defaulting to 500', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 2, maxQueueLength: 5 }]);
    expect(fg.getRules().flow[0]).toMatchObject({ maxQueueLength: 5, maxQueueingTimeMs: 500 });
    expect(fg.describeRules()[0]!.rule).toMatchObject({ maxQueueLength: 5, maxQueueingTimeMs: 500 });
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 2 }]);
    expect(fg.getRules().flow[0]).not.toHaveProperty('maxQueueLength');
    expect(fg.getRules().flow[0]).not.toHaveProperty('maxQueueingTimeMs');
  });
});

describe('concurrency rules whose queue serves by priority (prioritized)', () => {
  const PRIORITIZED: FlowRuleOptions = { ...BULKHEAD, threshold: 1, maxQueueLength: 3, prioritized: true };

  /** Exits the call holding the slot, lets the next one in, and returns it. */
  async function next(held: Entry | undefined, waiting: Promise<Entry | undefined>): Promise<Entry | undefined> {
    held!.exit();
    await flush();
    return waiting;
  }

  it('serves critical waiters first, then default, then sheddable, in arrival order within each', async () => {
    const { fg } = engineWith([{ ...PRIORITIZED, maxQueueLength: 5 }]);
    const log: string[] = [];
    const first = await fg.enter('r');
    const s1 = tracked(fg, log, 's1', { priority: 'sheddable' });
    const d1 = tracked(fg, log, 'd1', { priority: 'default' });
    const s2 = tracked(fg, log, 's2', { priority: 'sheddable' });
    const c1 = tracked(fg, log, 'c1', { priority: 'critical' });
    const c2 = tracked(fg, log, 'c2', { priority: 'critical' });
    await flush();
    expect(log).toEqual([]);
    let held = await next(first, c1);
    for (const waiting of [c2, d1, s1, s2]) held = await next(held, waiting);
    held!.exit();
    expect(log).toEqual(['c1:in', 'c2:in', 'd1:in', 's1:in', 's2:in']);
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('makes room in a full queue for a more important call by refusing the newest least important waiter', async () => {
    const { fg } = engineWith([PRIORITIZED]);
    const log: string[] = [];
    const first = await fg.enter('r');
    const s1 = tracked(fg, log, 's1', { priority: 'sheddable' });
    const s2 = tracked(fg, log, 's2', { priority: 'sheddable' });
    const d1 = tracked(fg, log, 'd1', { priority: 'default' });
    // Full (3): a critical call takes the place of s2, the newest sheddable one.
    const c1 = tracked(fg, log, 'c1', { priority: 'critical' });
    await flush();
    expect(log).toEqual(['s2:ERR_FLOW_BLOCKED']);
    // A sheddable newcomer finds no one less important to replace: refused at once.
    const s3 = tracked(fg, log, 's3', { priority: 'sheddable' });
    await flush();
    expect(log).toEqual(['s2:ERR_FLOW_BLOCKED', 's3:ERR_FLOW_BLOCKED']);
    let held = await next(first, c1);
    held = await next(held, d1);
    held = await next(held, s1);
    held!.exit();
    await Promise.all([s2, s3]);
    expect(log).toEqual(['s2:ERR_FLOW_BLOCKED', 's3:ERR_FLOW_BLOCKED', 'c1:in', 'd1:in', 's1:in']);
    expect(fg.stats('r')!.concurrency).toBe(0);
    // Counted as blocks of the resource, as any refusal.
    expect(fg.stats('r')!.lastSecond.block).toBe(2);
  });

  it('refuses a newcomer as important as the last waiter when full: an equal never replaces an earlier one', async () => {
    const { fg } = engineWith([{ ...PRIORITIZED, maxQueueLength: 1 }]);
    const log: string[] = [];
    const first = await fg.enter('r');
    const c1 = tracked(fg, log, 'c1', { priority: 'critical' });
    const c2 = tracked(fg, log, 'c2', { priority: 'critical' });
    await flush();
    expect(log).toEqual(['c2:ERR_FLOW_BLOCKED']);
    expect(await c2).toBeUndefined();
    (await next(first, c1))!.exit();
    expect(log).toEqual(['c2:ERR_FLOW_BLOCKED', 'c1:in']);
  });

  it('gives a critical waiter its deadline like any other, and the refused one nothing held', async () => {
    const { fg, clock } = engineWith([PRIORITIZED]);
    const log: string[] = [];
    const first = await fg.enter('r');
    const c1 = tracked(fg, log, 'c1', { priority: 'critical' });
    await clock.advance(1000);
    await c1;
    expect(log).toEqual(['c1:ERR_FLOW_BLOCKED']);
    first.exit();
    expect(fg.stats('r')!.concurrency).toBe(0);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('is refused on rules it does not apply to, by path', () => {
    const fg = new Floodgate();
    let thrown: unknown;
    try {
      fg.loadFlowRules([
        { resource: 'a', metric: 'concurrency', threshold: 1, prioritized: true },
        { resource: 'b', metric: 'concurrency', threshold: 1, maxQueueLength: 0, prioritized: true },
        {
          resource: 'c',
          metric: 'concurrency',
          threshold: 1,
          maxQueueLength: 2,
          prioritized: true,
          occupyTimeoutMs: 5,
        },
      ]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RuleValidationError);
    expect((thrown as RuleValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      "flow[0].prioritized: applies to concurrency rules with a queue only (behavior 'reject', maxQueueLength > 0)",
      "flow[1].prioritized: applies to concurrency rules with a queue only (behavior 'reject', maxQueueLength > 0)",
      "flow[2].occupyTimeoutMs: applies to prioritized qps rules only (a queue's longest wait is maxQueueingTimeMs)",
    ]);
    expect(fg.getRules().flow).toEqual([]);
  });

  it('shows prioritized in getRules() on a queued concurrency rule, without occupyTimeoutMs', () => {
    const { fg } = engineWith([PRIORITIZED]);
    expect(fg.getRules().flow[0]).toMatchObject({ prioritized: true, maxQueueLength: 3 });
    expect(fg.getRules().flow[0]).not.toHaveProperty('occupyTimeoutMs');
  });
});
