import { Floodgate, FlowBlockError } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { clustered } from '../cluster/memory-cluster-backend';
import { engineWith, passesUntilBlocked } from './helpers';

/** The engine of `clustered()` with these flow rules. */
const withRules = (rules: FlowRuleOptions[]) => clustered({ flow: rules });

describe('relate strategy', () => {
  it("limits the resource by refResource's traffic", () => {
    const { fg } = engineWith([{ resource: 'write', strategy: 'relate', refResource: 'read', threshold: 2 }]);
    fg.entry('write').exit();
    fg.entry('read').exit();
    fg.entry('read').exit();
    expect(fg.tryEntry('write')).toBeInstanceOf(FlowBlockError);
  });

  it('does not limit refResource itself', () => {
    const { fg } = engineWith([{ resource: 'write', strategy: 'relate', refResource: 'read', threshold: 1 }]);
    for (let i = 0; i < 5; i++) fg.entry('read').exit();
    expect(fg.stats('read')!.lastSecond.block).toBe(0);
  });

  it('passes while refResource has never been entered', () => {
    const { fg } = engineWith([{ resource: 'write', strategy: 'relate', refResource: 'read', threshold: 0 }]);
    expect(fg.tryEntry('write')).not.toBeInstanceOf(FlowBlockError);
  });

  it('tracks refResource even past the resource cap', () => {
    const capped = new Floodgate({ clock: new ManualClock(), maxResources: 1 });
    capped.entry('unrelated').exit();
    capped.loadFlowRules([{ resource: 'write', strategy: 'relate', refResource: 'read', threshold: 1 }]);
    capped.entry('write').exit();
    capped.entry('read').exit();
    expect(capped.tryEntry('write')).toBeInstanceOf(FlowBlockError);
  });
});

describe('limitOrigin', () => {
  it('limits only the named origin, counting its own calls', () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 1, limitOrigin: 'app-a' }]);
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-a' })).toBe(1);
    for (let i = 0; i < 5; i++) fg.entry('r', { origin: 'app-b' }).exit();
    for (let i = 0; i < 5; i++) fg.entry('r').exit();
    expect(fg.stats('r')!.lastSecond).toMatchObject({ pass: 11, block: 1 });
  });

  it("does not count other origins' calls against the named origin", () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 2, limitOrigin: 'app-a' }]);
    for (let i = 0; i < 5; i++) fg.entry('r', { origin: 'app-b' }).exit();
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-a' })).toBe(2);
  });

  it("limits each origin not named by another rule on its own with 'other'", () => {
    const { fg } = engineWith([
      { resource: 'r', threshold: 5, limitOrigin: 'app-a' },
      { resource: 'r', threshold: 1, limitOrigin: 'other' },
    ]);
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-b' })).toBe(1);
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-c' })).toBe(1);
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-a' })).toBe(5);
  });

  it('does not apply origin rules to calls without an origin', () => {
    const { fg } = engineWith([
      { resource: 'r', threshold: 0, limitOrigin: 'app-a' },
      { resource: 'r', threshold: 0, limitOrigin: 'other' },
    ]);
    expect(fg.tryEntry('r')).not.toBeInstanceOf(FlowBlockError);
  });

  it("counts every origin together with 'default'", () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 3 }]);
    fg.entry('r', { origin: 'a' }).exit();
    fg.entry('r', { origin: 'b' }).exit();
    fg.entry('r').exit();
    expect(fg.tryEntry('r', { origin: 'c' })).toMatchObject({ code: 'ERR_FLOW_BLOCKED', origin: 'c' });
  });

  it("limits a named origin's calls to a related resource", () => {
    const { fg } = engineWith([
      { resource: 'write', strategy: 'relate', refResource: 'read', threshold: 1, limitOrigin: 'app-a' },
    ]);
    fg.entry('read').exit();
    fg.entry('read').exit();
    expect(fg.tryEntry('write', { origin: 'app-b' })).not.toBeInstanceOf(FlowBlockError);
    expect(fg.tryEntry('write', { origin: 'app-a' })).toBeInstanceOf(FlowBlockError);
  });

  it("limits a caller calling itself 'default' or 'other' as any other origin under an 'other' rule", () => {
    const { fg } = engineWith([
      { resource: 'r', threshold: 100 },
      { resource: 'r', threshold: 1, limitOrigin: 'other' },
    ]);
    expect(passesUntilBlocked(fg, 'r', { origin: 'default' })).toBe(1);
    expect(passesUntilBlocked(fg, 'r', { origin: 'other' })).toBe(1);
  });

  it("forgets an origin's statistics once no rule reads them, and counts it afresh when a rule names it again", () => {
    const { fg } = engineWith([{ resource: 'r', threshold: 2, limitOrigin: 'app-a' }]);
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-a' })).toBe(2);
    fg.loadFlowRules([{ resource: 'r', threshold: 100 }]);
    fg.loadFlowRules([{ resource: 'r', threshold: 2, limitOrigin: 'app-a' }]);
    expect(passesUntilBlocked(fg, 'r', { origin: 'app-a' })).toBe(2);
  });

  it('limits concurrency per origin', () => {
    const { fg } = engineWith([{ resource: 'r', metric: 'concurrency', threshold: 1, limitOrigin: 'other' }]);
    const a = fg.entry('r', { origin: 'a' });
    fg.entry('r', { origin: 'b' });
    expect(fg.tryEntry('r', { origin: 'a' })).toBeInstanceOf(FlowBlockError);
    a.exit();
    expect(fg.tryEntry('r', { origin: 'a' })).not.toBeInstanceOf(FlowBlockError);
  });
});

describe('cluster flow rules', () => {
  it('names each rule in the store by resource, behaviour and origin, with one scope for its one count and one per other origin', async () => {
    const { fg, backend } = withRules([
      { resource: 'r', threshold: 5, cluster: {} },
      { resource: 'r', threshold: 5, limitOrigin: 'app-a', cluster: {} },
      { resource: 'r', threshold: 5, limitOrigin: 'other', cluster: {} },
      { resource: 's', behavior: 'throttle', threshold: 5, cluster: {} },
    ]);
    (await fg.enter('r', { origin: 'app-a' })).exit();
    (await fg.enter('r', { origin: 'app-b' })).exit();
    (await fg.enter('s')).exit();
    expect([...backend.limiters].map(([key, limiter]) => [key, limiter.spec.kind, limiter.scopes()])).toEqual([
      ['flow|r|reject|default#0', 'window', ['']],
      ['flow|r|reject|app-a#0', 'window', ['']],
      ['flow|r|reject|other#0', 'window', ['app-b']],
      ['flow|s|throttle|default#0', 'pace', ['']],
    ]);
  });

  it("does not count calls without an origin under an 'other' rule in the store", async () => {
    const { fg, backend } = withRules([{ resource: 'r', threshold: 1, limitOrigin: 'other', cluster: {} }]);
    for (let i = 0; i < 3; i++) (await fg.enter('r')).exit();
    expect([...backend.limiters.values()].flatMap((limiter) => limiter.scopes())).toEqual([]);
  });

  it('paces a throttle rule in the store: enter() calls queue one interval apart', async () => {
    const { fg, clock } = withRules([{ resource: 'r', behavior: 'throttle', threshold: 10, cluster: {} }]);
    const first = await fg.enter('r');
    const second = fg.enter('r');
    await new Promise((resolve) => setImmediate(resolve)); // the store answers: wait 100 ms
    await clock.advance(100);
    expect([first.createdAt, (await second).createdAt]).toEqual([0, 100]);
  });
});
