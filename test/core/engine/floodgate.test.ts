import { Entry, Floodgate, FlowBlockError, RuleValidationError, type EntryOptions } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { MAX_RESOURCE_NAME_LENGTH } from '../../../packages/core/src/kernel/rule-reader';
import type { BlockEvent, PassEvent } from '@floodgate/core/metrics';

const engine = (): { fg: Floodgate; clock: ManualClock } => {
  const clock = new ManualClock();
  return { fg: new Floodgate({ clock }), clock };
};

describe('Floodgate entries', () => {
  it('throws the block error from entry() and returns it from tryEntry()', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    expect(() => fg.entry('r')).toThrow(FlowBlockError);
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
  });

  it('measures response time from admission to exit', async () => {
    const { fg, clock } = engine();
    const entry = fg.entry('r');
    await clock.advance(42);
    entry.exit();
    expect(fg.stats('r')!.lastSecond.totalRtMs).toBe(42);
  });

  it('counts a traced error once, when the entry exits', () => {
    const { fg } = engine();
    const entry = fg.entry('r');
    entry.traceError(new Error('a'));
    entry.traceError(new Error('b'));
    expect(entry.error).toEqual(new Error('b'));
    entry.exit();
    entry.traceError(new Error('late'));
    expect(fg.stats('r')!.lastSecond.error).toBe(1);
  });

  it('does not treat a block error from a nested call as a business error', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'inner', threshold: 0 }]);
    const outer = fg.entry('outer');
    outer.traceError(fg.tryEntry('inner'));
    expect(outer.hasError).toBe(false);
  });

  it.each<[string, unknown]>([
    ['a string', '2'],
    ['a boolean', true],
    ['an array', [3]],
    ['a fraction', 1.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an unsafe integer', 2 ** 53],
  ])('refuses an acquireCount that is %s, counting nothing (#12)', async (_what, acquireCount) => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 100 }]);
    expect(() => fg.entry('r', { acquireCount } as never)).toThrow(/^acquireCount must be a safe integer >= 0, got /);
    await expect(fg.enter('r', { acquireCount } as never)).rejects.toThrow(RangeError);
    await expect(fg.run('r', () => 1, { acquireCount } as never)).rejects.toThrow(RangeError);
    fg.entry('r').exit();
    expect(fg.stats('r')!.lastSecond.pass).toBe(1);
  });

  it('says what a bad resource name is, a symbol too (#12)', () => {
    const { fg } = engine();
    expect(() => fg.entry(Symbol('who') as never)).toThrow(
      `resource must be a non-empty string of at most ${MAX_RESOURCE_NAME_LENGTH} characters, got Symbol(who)`,
    );
    expect(() => fg.entry(42 as never)).toThrow('got 42');
  });

  it('refuses a resource name longer than MAX_RESOURCE_NAME_LENGTH, with a short message (#12)', () => {
    const { fg } = engine();
    fg.entry('x'.repeat(MAX_RESOURCE_NAME_LENGTH)).exit();
    let error: unknown;
    try {
      fg.entry('x'.repeat(100_000));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message.length).toBeLessThan(250);
    expect((error as Error).message).toContain('(100000 characters, 99940 cut)');
    expect(fg.resourceNames()).toEqual(['x'.repeat(MAX_RESOURCE_NAME_LENGTH)]);
  });

  it('rejects a negative acquireCount and an empty resource name', () => {
    const { fg } = engine();
    expect(() => fg.entry('r', { acquireCount: -1 })).toThrow(RangeError);
    expect(() => fg.entry('')).toThrow(TypeError);
  });

  it('reports bad input to enter() and run() as a rejection, never a synchronous throw', async () => {
    const { fg } = engine();
    const entering = fg.enter('', {});
    await expect(entering).rejects.toThrow(TypeError);
    await expect(fg.enter('r', { acquireCount: -1 })).rejects.toThrow(RangeError);
    await expect(fg.run('', () => 1)).rejects.toThrow(TypeError);
  });

  it('blocks enter() at once under a throttle rule without a queue', async () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', behavior: 'throttle', threshold: 10, maxQueueingTimeMs: 0 }]);
    await fg.enter('r');
    await expect(fg.enter('r')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: 100 });
  });

  it('admits enter() at once when no rule makes it wait', async () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    const entry = await fg.enter('r');
    expect(entry).toBeInstanceOf(Entry);
    await expect(fg.enter('r')).rejects.toBeInstanceOf(FlowBlockError);
  });
});

describe('Floodgate.enterOrWait', () => {
  const QUEUE = {
    resource: 'q',
    metric: 'concurrency',
    threshold: 1,
    maxQueueLength: 1,
    maxQueueingTimeMs: 5000,
  } as const;

  it('answers at once unless the call waits, and makes the signal of a call that waits only', async () => {
    const fg = new Floodgate({ clock: new ManualClock(0) });
    fg.loadFlowRules([QUEUE]);
    const signals: AbortController[] = [];
    const signal = (): AbortSignal => signals[signals.push(new AbortController()) - 1]!.signal;
    const first = fg.enterOrWait('q', undefined, signal);
    expect(first).toBeInstanceOf(Entry);
    const second = fg.enterOrWait('q', undefined, signal);
    expect(second).toBeInstanceOf(Promise);
    const third = fg.enterOrWait('q', undefined, signal);
    expect(third).toBeInstanceOf(FlowBlockError);
    expect(signals).toHaveLength(1);
    (first as Entry).exit();
    const admitted = await (second as Promise<Entry>);
    expect(admitted).toBeInstanceOf(Entry);
    admitted.exit();
    expect(fg.stats('q')).toMatchObject({ concurrency: 0 });
  });

  it('abandons a wait when the signal it was given aborts, giving the place back', async () => {
    const fg = new Floodgate({ clock: new ManualClock(0) });
    fg.loadFlowRules([QUEUE]);
    const controller = new AbortController();
    const first = fg.enterOrWait('q', undefined, () => controller.signal) as Entry;
    const waiting = fg.enterOrWait('q', undefined, () => controller.signal);
    controller.abort(new Error('client left'));
    await expect(waiting).rejects.toThrow('client left');
    expect(fg.enterOrWait('q', undefined, () => undefined)).toBeInstanceOf(Promise);
    first.exit();
  });

  it('throws what entry() throws for bad options, synchronously', () => {
    const fg = new Floodgate({ clock: new ManualClock(0) });
    fg.loadFlowRules([QUEUE]);
    expect(() => fg.enterOrWait('q', { acquireCount: -1 }, () => undefined)).toThrow(RangeError);
  });
});

/** The parameters of a call whose `key` cannot be read: reading it throws. */
function unreadable(key: string): Record<string, unknown> {
  return Object.defineProperty({}, key, {
    enumerable: true,
    get() {
      throw new Error(`cannot read ${key}`);
    },
  });
}

describe('a check that throws', () => {
  // The first hotspot rule takes one of 'alice''s slots; the second throws reading its parameter.
  const HOT_PARAMS = [
    { resource: 'r', paramIndex: 0, metric: 'concurrency' as const, threshold: 1 },
    { resource: 'r', paramKey: 'page', threshold: 10 },
  ];
  const throwing: EntryOptions = { args: ['alice'], params: unreadable('page') };

  it('gives back what earlier checks took, in entry(), and rethrows its error (#12)', () => {
    const { fg } = engine();
    fg.loadHotParamRules(HOT_PARAMS);
    expect(() => fg.entry('r', throwing)).toThrow('cannot read page');
    expect(fg.tryEntry('r', { args: ['alice'] })).toBeInstanceOf(Entry);
    expect(fg.stats('r')).toMatchObject({ concurrency: 1, lastSecond: { pass: 1 } });
  });

  it('gives back what earlier checks took, in an enter() that may wait, and rejects with its error (#12)', async () => {
    const { fg } = engine();
    fg.loadRules({
      hotParams: HOT_PARAMS,
      flow: [{ resource: 'r', behavior: 'throttle', threshold: 1000, maxQueueingTimeMs: 500 }],
    });
    await expect(fg.enter('r', throwing)).rejects.toThrow('cannot read page');
    expect(fg.tryEntry('r', { args: ['alice'] })).toBeInstanceOf(Entry);
  });
});

describe('Floodgate.run', () => {
  it('returns what the function returns and exits the entry', async () => {
    const { fg, clock } = engine();
    const result = await fg.run('r', async () => {
      await clock.advance(5);
      return 'value';
    });
    expect(result).toBe('value');
    expect(fg.stats('r')).toMatchObject({ concurrency: 0, lastSecond: { success: 1, totalRtMs: 5, error: 0 } });
  });

  it('traces and rethrows what the function throws', async () => {
    const { fg } = engine();
    await expect(fg.run('r', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(fg.stats('r')!.lastSecond).toMatchObject({ error: 1, success: 1 });
  });

  it('answers a block with blockHandler before fallback', async () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    const fallback = jest.fn(() => 'fallback');
    await expect(fg.run('r', () => 'call', { blockHandler: (e) => `blocked:${e.code}`, fallback })).resolves.toBe(
      'blocked:ERR_FLOW_BLOCKED',
    );
    expect(fallback).not.toHaveBeenCalled();
    await expect(
      fg.run('r', () => 'call', { fallback: (e) => `fallback:${(e as FlowBlockError).code}` }),
    ).resolves.toBe('fallback:ERR_FLOW_BLOCKED');
  });

  it('answers a failure with fallback, after exiting', async () => {
    const { fg } = engine();
    const seen: number[] = [];
    const value = await fg.run('r', () => Promise.reject(new Error('down')), {
      fallback: (error) => {
        seen.push(fg.stats('r')!.concurrency);
        return `fallback:${(error as Error).message}`;
      },
    });
    expect(value).toBe('fallback:down');
    expect(seen).toEqual([0]);
  });

  it('rethrows ignored exceptions untraced and without fallback', async () => {
    class NotFound extends Error {}
    const { fg } = engine();
    const fallback = jest.fn();
    await expect(
      fg.run('r', () => Promise.reject(new NotFound('nope')), { fallback, exceptionsToIgnore: [NotFound] }),
    ).rejects.toBeInstanceOf(NotFound);
    await expect(
      fg.run('r', () => Promise.reject(new Error('x')), { exceptionsToIgnore: (e) => (e as Error).message === 'x' }),
    ).rejects.toThrow('x');
    expect(fallback).not.toHaveBeenCalled();
    expect(fg.stats('r')!.lastSecond.error).toBe(0);
  });

  it('surfaces the error of a throwing handler', async () => {
    const { fg } = engine();
    await expect(
      fg.run('r', () => Promise.reject(new Error('down')), {
        fallback: () => {
          throw new Error('fallback broke');
        },
      }),
    ).rejects.toThrow('fallback broke');
    expect(fg.stats('r')!.concurrency).toBe(0);
  });

  it('runs a sync function synchronously with runSync', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    expect(fg.runSync('r', () => 1 + 1)).toBe(2);
    expect(fg.runSync('r', () => 'never', { blockHandler: () => 'blocked' })).toBe('blocked');
    expect(() =>
      fg.runSync('s', () => {
        throw new Error('sync boom');
      }),
    ).toThrow('sync boom');
    expect(fg.stats('s')!.lastSecond.error).toBe(1);
  });

  it('calls the function with thisArg as its this, and with the entry and signal either way', async () => {
    const { fg } = engine();
    const receiver = { name: 'receiver' };
    function named(this: unknown, entry: Entry, signal: AbortSignal | undefined): unknown[] {
      return [this, entry.resource, signal];
    }
    // `this` is the very object given (toBe: a copy of it would not do).
    const expectCall = (call: unknown[], self: unknown, resource: string): void => {
      expect(call[0]).toBe(self);
      expect(call[1]).toBe(resource);
    };
    const ran = await fg.run('r', named, {}, receiver);
    expectCall(ran, receiver, 'r');
    expect(ran[2]).toBeUndefined();
    expectCall(fg.runSync('s', named, {}, receiver), receiver, 's');
    // Without one, `this` is undefined (not the global object), as in a plain call of strict code.
    expectCall(fg.runSync('s', named), undefined, 's');
    const timed = await fg.run('r', named, { timeoutMs: 100 }, receiver);
    expectCall(timed, receiver, 'r');
    expect(timed[2]).toBeInstanceOf(AbortSignal);
    // A resource whose calls may wait takes the asynchronous admission, then calls `fn` the same way.
    fg.loadFlowRules([{ resource: 'q', threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500 }]);
    expectCall(await fg.run('q', named, {}, receiver), receiver, 'q');
  });

  it('exits a runSync entry when the promise its function returns settles', async () => {
    const { fg, clock } = engine();
    let reject!: (e: Error) => void;
    const pending = fg.runSync('r', () => new Promise<string>((_, r) => (reject = r)), {
      fallback: async () => 'fallback',
    });
    expect(fg.stats('r')!.concurrency).toBe(1);
    await clock.advance(7);
    reject(new Error('late'));
    await expect(pending).resolves.toBe('fallback');
    expect(fg.stats('r')).toMatchObject({ concurrency: 0, lastSecond: { error: 1, totalRtMs: 7 } });
  });
});

describe('Floodgate events', () => {
  it('emits pass and block with the resource and origin', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    const passes: PassEvent[] = [];
    const blocks: BlockEvent[] = [];
    fg.on('pass', (e) => passes.push(e));
    const off = fg.on('block', (e) => blocks.push(e));
    fg.entry('r', { origin: 'app' }).exit();
    fg.tryEntry('r');
    off();
    fg.tryEntry('r');
    expect(passes).toEqual([{ resource: 'r', origin: 'app', acquireCount: 1, priority: 'default' }]);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({ resource: 'r', origin: '', error: { code: 'ERR_FLOW_BLOCKED' } });
  });

  it('emits rulesLoaded with the rules in force', () => {
    const { fg } = engine();
    const loaded = jest.fn();
    fg.on('rulesLoaded', loaded);
    fg.loadFlowRules([{ resource: 'r', threshold: 3 }]);
    expect(loaded).toHaveBeenCalledWith(
      expect.objectContaining({ rules: fg.getRules(), kinds: ['flow'], resources: ['r'], source: 'api' }),
    );
    expect(fg.getRules().flow[0]).toMatchObject({ resource: 'r', threshold: 3 });
  });

  it('blocks cheaply and quietly under attack when a block listener throws: one warning, then a count (#12)', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    fg.on('block', () => {
      throw new Error('listener bug');
    });
    let blocked = 0;
    for (let i = 0; i < 10_000; i++) if (fg.tryEntry('r') instanceof FlowBlockError) blocked++;
    expect(blocked).toBe(10_000);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(fg.listenerErrors).toBe(10_000);
    warn.mockRestore();
  });

  it('keeps working when a listener throws', () => {
    const { fg } = engine();
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    fg.on('pass', () => {
      throw new Error('listener bug');
    });
    expect(() => fg.entry('r').exit()).not.toThrow();
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('listener bug'),
      expect.objectContaining({ code: 'FLOODGATE_LISTENER_ERROR' }),
    );
    warn.mockRestore();
  });

  it('refuses an unknown event name', () => {
    expect(() => engine().fg.on('explode' as never, () => undefined)).toThrow('Unknown Floodgate event "explode"');
  });
});

describe('Floodgate.toJSON', () => {
  it('is how many resources the engine tracks and how many rules are in force, whatever refers back to it (#25)', () => {
    const { fg } = engine();
    fg.loadRules({
      flow: [
        { resource: 'a', threshold: 5 },
        { resource: 'b', threshold: 5 },
      ],
      circuitBreakers: [{ resource: 'a', strategy: 'errorCount', threshold: 3, retryTimeoutMs: 1000 }],
    });
    fg.on('pass', () => undefined);
    fg.entry('c').exit();
    // a and b (their rules), c (entered)
    expect(JSON.parse(JSON.stringify({ engine: fg })) as unknown).toEqual({ engine: { resources: 3, rules: 3 } });
  });
});

describe('bounded resources', () => {
  it('stops tracking new names past maxResources, warning once', () => {
    const fg = new Floodgate({ clock: new ManualClock(), maxResources: 3 });
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const warnings: string[] = [];
    fg.on('warning', (e) => warnings.push(e.code));
    for (let i = 0; i < 10_000; i++) fg.entry(`GET /items/${i}`).exit();
    expect(fg.resourceNames()).toEqual(['GET /items/0', 'GET /items/1', 'GET /items/2']);
    expect(fg.stats('GET /items/3')).toBeUndefined();
    expect(warnings).toEqual(['FLOODGATE_MAX_RESOURCES']);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it('does not limit an untracked resource, and its entry exits harmlessly', () => {
    const fg = new Floodgate({ clock: new ManualClock(), maxResources: 1 });
    jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    fg.entry('first').exit();
    const entry = fg.entry('second');
    entry.traceError(new Error('x'));
    expect(() => entry.exit()).not.toThrow();
    jest.restoreAllMocks();
  });

  it('always tracks and limits resources that have rules', () => {
    const fg = new Floodgate({ clock: new ManualClock(), maxResources: 1 });
    fg.entry('first').exit();
    fg.loadFlowRules([{ resource: 'limited', threshold: 1 }]);
    fg.entry('limited').exit();
    expect(fg.tryEntry('limited')).toBeInstanceOf(FlowBlockError);
  });

  it('rejects bad engine options', () => {
    expect(() => new Floodgate({ maxResources: 0 })).toThrow(
      'options.maxResources: must be a safe integer >= 1, got 0',
    );
    expect(() => new Floodgate({ clock: {} as never, colour: 'red' } as never)).toThrow(RuleValidationError);
  });
});

describe('rules from code and from sources', () => {
  it('lets loaded rules for a resource take precedence over declared ones, and restores them on removal', () => {
    const { fg } = engine();
    fg.declareRules({
      flow: [
        { resource: 'r', threshold: 1 },
        { resource: 's', threshold: 1 },
      ],
    });
    fg.loadFlowRules([{ resource: 'r', threshold: 5 }]);
    expect(fg.getRules().flow.map((r) => [r.resource, r.threshold])).toEqual([
      ['r', 5],
      ['s', 1],
    ]);
    fg.loadFlowRules([]);
    expect(fg.getRules().flow.map((r) => [r.resource, r.threshold])).toEqual([
      ['r', 1],
      ['s', 1],
    ]);
  });

  it('withdraws a declaration', () => {
    const { fg } = engine();
    const withdraw = fg.declareRules({ flow: [{ resource: 'r', threshold: 0 }] });
    withdraw();
    withdraw();
    expect(fg.getRules().flow).toEqual([]);
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });

  it('validates declared rules and keeps what was in force', () => {
    const { fg } = engine();
    fg.declareRules({ flow: [{ resource: 'r', threshold: 1 }] });
    expect(() => fg.declareRules({ flow: [{ resource: 'x', threshold: -1 }] })).toThrow('flow[0].threshold');
    expect(fg.getRules().flow).toHaveLength(1);
  });

  it('replaces only the kinds given to loadRules', () => {
    const { fg } = engine();
    fg.loadRules({ flow: [{ resource: 'r', threshold: 1 }], authority: [{ resource: 'r', origins: ['a'] }] });
    fg.loadRules({ flow: [] });
    expect(fg.getRules().authority).toHaveLength(1);
    expect(() => fg.loadRules({ isolation: [] } as never)).toThrow('isolation: unknown field');
  });

  it('keeps statistics across a reload', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 2 }]);
    fg.entry('r').exit();
    fg.entry('r').exit();
    fg.loadFlowRules([{ resource: 'r', threshold: 3 }]);
    expect(fg.stats('r')!.lastSecond.pass).toBe(2);
    fg.entry('r').exit();
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
  });

  it('applies new rules to entries already made only for what is checked later', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 1 }]);
    const held = fg.entry('r');
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 2 }]);
    fg.entry('r');
    expect(fg.tryEntry('r')).toBeInstanceOf(FlowBlockError);
    held.exit();
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry);
  });
});
