import fc from 'fast-check';
import { Entry, Floodgate, RuleValidationError, type Priority } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { AdaptiveLimit } from '../../../packages/core/src/flow/adaptive-limit';
import { BorrowingWindow } from '../../../packages/core/src/flow/borrowing-window';
import { PARTITION_IDLE_MS, PartitionedLimit } from '../../../packages/core/src/flow/partitioned-limit';
import { BLOCKED, PASS } from '../../../packages/core/src/flow/traffic-controllers';
import { StatisticNode } from '../../../packages/core/src/kernel/statistic-node';
import { PRIORITIES } from '../../../packages/core/src/kernel/priority';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';
import { engineWith } from './helpers';

function issuesOf(rules: FlowRuleOptions[]): string[] {
  try {
    new Floodgate({ clock: new ManualClock() }).loadFlowRules(rules);
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return (error as RuleValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error('expected a RuleValidationError');
}

/** Holds calls of `priority` on `resource` until one is refused; returns those held. */
function holdUntilRefused(fg: Floodgate, resource: string, priority: Priority, most = 1000): Entry[] {
  const held: Entry[] = [];
  while (held.length < most) {
    const entry = fg.tryEntry(resource, { priority });
    if (!(entry instanceof Entry)) break;
    held.push(entry);
  }
  return held;
}

const PARTITIONED: FlowRuleOptions = {
  resource: 'r',
  metric: 'concurrency',
  threshold: 10,
  partitions: { critical: 0.5, default: 0.3, sheddable: 0.2 },
};

describe('adaptive concurrency by priority', () => {
  it('refuses sheddable calls from floor(0.8 × limit) in flight and critical ones from floor(1.1 × limit)', () => {
    const limit = new AdaptiveLimit(20, 3, 1000);
    const node = new StatisticNode();
    // The first call starts the no-load measurement at minLimit 3: floor(2.4) = 2, floor(3.3) = 3.
    node.concurrency = 2;
    expect(limit.tryPass(node, 1, 0, false, 'sheddable')).toBe(BLOCKED);
    expect(limit.tryPass(node, 1, 0, false, 'default')).toBe(PASS);
    node.concurrency = 3;
    expect(limit.tryPass(node, 1, 0, false, 'critical')).toBe(BLOCKED);
  });

  it('takes the rule’s priorityFactors, through the engine', () => {
    const { fg } = engineWith([
      {
        resource: 'r',
        metric: 'concurrency',
        behavior: 'adaptive',
        threshold: 10,
        minLimit: 10,
        maxLimit: 100,
        priorityFactors: { sheddable: 0.5, critical: 2 },
      },
    ]);
    const sheddable = holdUntilRefused(fg, 'r', 'sheddable');
    expect(sheddable).toHaveLength(5);
    const critical = holdUntilRefused(fg, 'r', 'critical');
    expect(critical).toHaveLength(15);
    expect(fg.getRules().flow[0]).toMatchObject({ priorityFactors: { sheddable: 0.5, critical: 2 } });
  });
});

describe('partitioned concurrency', () => {
  it('lets a priority use idle shares while the total is under the threshold', () => {
    const { fg } = engineWith([PARTITIONED]);
    expect(holdUntilRefused(fg, 'r', 'sheddable')).toHaveLength(10);
  });

  it('keeps the unused share of a priority that asked within the last second', async () => {
    const { fg, clock } = engineWith([PARTITIONED]);
    const critical = holdUntilRefused(fg, 'r', 'critical', 1);
    expect(critical).toHaveLength(1);
    // Critical holds 1 of its 5 and asked just now: sheddable gets 10 − 1 − 4 reserved = 5.
    const sheddable = holdUntilRefused(fg, 'r', 'sheddable');
    expect(sheddable).toHaveLength(5);
    expect(holdUntilRefused(fg, 'r', 'critical')).toHaveLength(4);
    await clock.advance(PARTITION_IDLE_MS);
    // Default never asked: it reserves nothing.
    expect(fg.tryEntry('r', { priority: 'default' })).toBeInstanceOf(Error);
  });

  it('reserves a waking priority’s share from its first call on: borrowers leave it room as they exit', () => {
    const { fg } = engineWith([PARTITIONED]);
    const sheddable = holdUntilRefused(fg, 'r', 'sheddable');
    expect(sheddable).toHaveLength(10);
    expect(fg.tryEntry('r', { priority: 'critical' })).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    for (const entry of sheddable.splice(0, 5)) entry.exit();
    // Critical asked: its 5 are reserved, so sheddable cannot take the 5 freed slots back.
    expect(fg.tryEntry('r', { priority: 'sheddable' })).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(holdUntilRefused(fg, 'r', 'critical')).toHaveLength(5);
  });

  it('gives a slot back when a later check refuses the call', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadFlowRules([PARTITIONED, { resource: 'r', threshold: 0 }]);
    for (let i = 0; i < 20; i++) expect(fg.tryEntry('r', { priority: 'sheddable' })).toBeInstanceOf(Error);
    fg.loadFlowRules([PARTITIONED]);
    expect(holdUntilRefused(fg, 'r', 'sheddable')).toHaveLength(10);
  });

  it('counts the calls in flight under a rule a reload changed, so the total stays within the threshold', () => {
    const { fg } = engineWith([PARTITIONED]);
    const held = holdUntilRefused(fg, 'r', 'sheddable');
    fg.loadFlowRules([{ ...PARTITIONED, partitions: { critical: 0.8, sheddable: 0.2 } }]);
    expect(fg.tryEntry('r', { priority: 'critical' })).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    for (const entry of held) entry.exit();
    expect(holdUntilRefused(fg, 'r', 'critical')).toHaveLength(10);
  });

  it(
    'never exceeds the threshold, and gives each priority its guaranteed share while every priority keeps asking',
    () => {
      const step = fc.record({
        priority: fc.constantFrom(...PRIORITIES),
        exit: fc.boolean(),
        dtMs: fc.integer({ min: 0, max: 300 }),
        count: fc.integer({ min: 1, max: 3 }),
      });
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 30 }),
          fc.tuple(fc.nat(10), fc.nat(10), fc.nat(10)),
          fc.array(step, { maxLength: 200 }),
          fc.boolean(),
          (threshold, weights, steps, keepAsking) => {
            const sum = weights[0] + weights[1] + weights[2] || 1;
            const shares = { critical: weights[0] / sum, default: weights[1] / sum, sheddable: weights[2] / sum };
            const limit = new PartitionedLimit(threshold, shares);
            const held: Entry[] = [];
            let now = 0;
            const ask = (priority: Priority, count: number): void => {
              const busy = limit.inFlight(priority);
              const result = limit.tryPass(undefined, count, now, false, priority);
              if (result === PASS) held.push({ priority, acquireCount: count } as Entry);
              else if (keepAsking && busy + count <= limit.guaranteedFor(priority))
                throw new Error(`${priority} refused within its share at ${busy} + ${count}`);
              expect(limit.inFlight()).toBeLessThanOrEqual(threshold);
            };
            // Every priority asks at the start, so none is idle while the others borrow.
            if (keepAsking) for (const priority of PRIORITIES) ask(priority, 0);
            for (const s of steps) {
              now += keepAsking ? Math.min(s.dtMs, PARTITION_IDLE_MS / 2) : s.dtMs;
              if (keepAsking) for (const priority of PRIORITIES) ask(priority, 0);
              if (s.exit && held.length > 0) limit.freed(held.splice(0, 1)[0]!);
              else ask(s.priority, s.count);
            }
          },
        ),
        propertyRuns(200),
      );
    },
    propertyTimeoutMs(200),
  );
});

describe('prioritized QPS rules (borrowing from the next window)', () => {
  const RULE: FlowRuleOptions = { resource: 'r', threshold: 4, prioritized: true };

  it('lets a critical call wait for a token of the next bucket instead of refusing it', async () => {
    const { fg, clock } = engineWith([RULE], 100);
    for (let i = 0; i < 4; i++) (await fg.enter('r')).exit();
    await clock.advance(500);
    // At 600 the window [0, 1000) is full; the bucket [1000, 1500) is the first whose windows have room.
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    let entered: Entry | undefined;
    let refused: unknown;
    fg.enter('r', { priority: 'critical' }).then(
      (entry) => (entered = entry),
      (error: unknown) => (refused = error),
    );
    await clock.advance(399);
    expect(refused).toBeUndefined();
    expect(entered).toBeUndefined();
    await clock.advance(1);
    expect(entered).toBeInstanceOf(Entry);
    // The borrowed token counts in [1000, 1500): 3 calls are left of the window's 4.
    let passed = 0;
    for (let entry = fg.tryEntry('r'); entry instanceof Entry; entry = fg.tryEntry('r')) passed++;
    expect(passed).toBe(3);
  });

  it('refuses a borrower whose wait would pass occupyTimeoutMs, and critical calls of entry() (they cannot wait)', async () => {
    const { fg, clock } = engineWith([{ ...RULE, occupyTimeoutMs: 300 }], 100);
    for (let i = 0; i < 4; i++) (await fg.enter('r')).exit();
    await clock.advance(500);
    await expect(fg.enter('r', { priority: 'critical' })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    const { fg: other, clock: otherClock } = engineWith([RULE], 100);
    for (let i = 0; i < 4; i++) other.entry('r').exit();
    await otherClock.advance(500);
    expect(() => other.entry('r', { priority: 'critical' })).toThrow(
      expect.objectContaining({ code: 'ERR_FLOW_BLOCKED' }),
    );
  });

  it('gives a borrowed token back when the wait is abandoned', async () => {
    const { fg, clock } = engineWith([{ ...RULE, threshold: 1 }], 100);
    (await fg.enter('r')).exit();
    await clock.advance(500);
    const controller = new AbortController();
    const waiting = fg.enter('r', { priority: 'critical', signal: controller.signal });
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    // The token of [1000, 1500) is free again: another borrower takes it.
    const again = fg.enter('r', { priority: 'critical' });
    await clock.advance(400);
    await expect(again).resolves.toBeInstanceOf(Entry);
  });

  it(
    'never admits more than the threshold in a window, counting borrowed tokens where they wait to',
    () => {
      const call = fc.record({
        dtMs: fc.integer({ min: 0, max: 400 }),
        critical: fc.boolean(),
        count: fc.integer({ min: 1, max: 3 }),
        cancel: fc.boolean(),
      });
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 10 }), fc.array(call, { maxLength: 150 }), (threshold, calls) => {
          const window = new BorrowingWindow(threshold, 500);
          const node = new StatisticNode();
          const landed = new Map<number, number>();
          let now = 1000;
          for (const c of calls) {
            now += c.dtMs;
            const result = window.tryPass(node, c.count, now, true, c.critical ? 'critical' : 'default');
            if (result === BLOCKED) continue;
            expect(result).toBeLessThanOrEqual(500);
            node.addPass(now, c.count);
            if (c.cancel && result > 0) {
              node.cancelPass(now, c.count);
              window.refund(now + result, now, c.count);
              continue;
            }
            const bucket = Math.floor((now + result) / 500);
            landed.set(bucket, (landed.get(bucket) ?? 0) + c.count);
          }
          for (const [bucket, count] of landed)
            expect(count + (landed.get(bucket + 1) ?? 0)).toBeLessThanOrEqual(threshold);
        }),
        propertyRuns(300),
      );
    },
    propertyTimeoutMs(300),
  );
});

describe('validation of the priority fields', () => {
  it('names each misplaced or bad field by its path', () => {
    expect(
      issuesOf([
        { resource: 'a', threshold: 1, priorityFactors: { sheddable: 0.5 } },
        { resource: 'b', threshold: 1, partitions: { critical: 1 } },
        { resource: 'c', metric: 'concurrency', threshold: 1, partitions: { critical: 0.7, sheddable: 0.7 } },
        { resource: 'd', metric: 'concurrency', threshold: 1, prioritized: true },
        { resource: 'e', threshold: 1, occupyTimeoutMs: 10 },
        { resource: 'f', threshold: 1, prioritized: true, occupyTimeoutMs: -1 },
        { resource: 'g', threshold: 1, prioritized: true, strategy: 'relate', refResource: 'x' },
        { resource: 'h', metric: 'concurrency', threshold: 1, partitions: {} },
      ]),
    ).toEqual([
      "flow[0].priorityFactors: applies to behavior 'adaptive' only, got 'reject'",
      "flow[1].partitions: applies to concurrency rules with behavior 'reject' only",
      'flow[2].partitions: shares must sum to at most 1, got 1.4',
      "flow[3].prioritized: applies to concurrency rules with a queue only (behavior 'reject', maxQueueLength > 0)",
      'flow[4].occupyTimeoutMs: applies to prioritized rules only (prioritized: true)',
      expect.stringMatching(/^flow\[5\]\.occupyTimeoutMs: must be/),
      "flow[6].prioritized: applies to the resource's own calls only (strategy 'direct', limitOrigin not 'other')",
      'flow[7].partitions: must give a share to at least one of critical, default, sheddable',
    ]);
  });

  it('resolves the fields in getRules(), and a reload of an unchanged rule keeps its state', async () => {
    const { fg } = engineWith([PARTITIONED, { resource: 'q', threshold: 2, prioritized: true }]);
    expect(fg.getRules().flow).toEqual([
      expect.objectContaining({ partitions: { critical: 0.5, default: 0.3, sheddable: 0.2 } }),
      expect.objectContaining({ prioritized: true, occupyTimeoutMs: 500 }),
    ]);
    const held = holdUntilRefused(fg, 'r', 'sheddable');
    fg.loadFlowRules([PARTITIONED, { resource: 'q', threshold: 2, prioritized: true }]);
    expect(fg.tryEntry('r', { priority: 'critical' })).toBeInstanceOf(Error);
    for (const entry of held) entry.exit();
    expect(fg.tryEntry('r', { priority: 'critical' })).toBeInstanceOf(Entry);
  });
});
