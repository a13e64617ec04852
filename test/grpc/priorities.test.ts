import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { Floodgate, type Priority } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import {
  clientInterceptor,
  serverInterceptor,
  type ClientInterceptorOptions,
  type ServerInterceptorOptions,
} from '@floodgate/grpc';
import { until } from '../support/until';
import { clientTestbed, metadataOf, PATHS, sayOutcome, untilHeld, type EchoClient } from './grpc-harness';

const SAY = PATHS.say;
const OK = grpc.status.OK;
const UNAVAILABLE = grpc.status.UNAVAILABLE;
const EXHAUSTED = grpc.status.RESOURCE_EXHAUSTED;

/** The status code of a unary call (`OK` for a reply). */
async function codeOf(c: EchoClient, text: string, metadata = new grpc.Metadata()): Promise<grpc.status> {
  const { error } = await sayOutcome(c, { text }, metadata);
  return error === undefined ? OK : error.code;
}

/** The codes of `count` calls in a row, each with `x-priority: <claim>` (none when `claim` is undefined). */
async function codes(c: EchoClient, count: number, claim?: string): Promise<grpc.status[]> {
  const seen: grpc.status[] = [];
  for (let i = 0; i < count; i++)
    seen.push(await codeOf(c, 'a', claim === undefined ? undefined : metadataOf({ 'x-priority': claim })));
  return seen;
}

/** Concurrency 2, guaranteed 1 to critical calls and 1 to sheddable ones. */
const PARTITIONED = { metric: 'concurrency', threshold: 2, partitions: { critical: 0.5, sheddable: 0.5 } } as const;

describe('gRPC server priorities', () => {
  let clock: ManualClock;
  let fg: Floodgate;
  const bed = clientTestbed(() => fg);

  beforeEach(() => {
    // A clock that moves only when a test says: in one window a system rule of maxQps 10 lets 8
    // sheddable calls through, 10 default ones, 11 critical ones.
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
  });

  /**
   * A server under `priority`, and a system rule of maxQps 10 (or, with `partitioned`, the
   * {@link PARTITIONED} rule on Say). Its client's interceptor has no rules and honours no
   * pushback: what is refused, the server refused.
   */
  async function serve(priority: ServerInterceptorOptions['priority'], partitioned = false): Promise<EchoClient> {
    if (!partitioned) fg.loadSystemRules([{ maxQps: 10 }]);
    const methods: ServerInterceptorOptions['methods'] = partitioned ? { [SAY]: { rateLimit: PARTITIONED } } : {};
    const { c } = await bed.connect({ maxPushbackMs: 0 }, [serverInterceptor({ floodgate: fg, priority, methods })]);
    return c;
  }

  it('reads the priority a client lowers itself to from metadata: sheddable calls are refused first', async () => {
    const c = await serve({ metadata: 'X-Priority' });
    expect(await codes(c, 9, 'sheddable')).toEqual([...Array<grpc.status>(8).fill(OK), UNAVAILABLE]);
    expect(await codes(c, 3)).toEqual([OK, OK, UNAVAILABLE]);
  });

  it('never lets metadata claim more than max: critical is read as default unless allowed', async () => {
    const c = await serve({ metadata: 'x-priority' });
    expect(await codes(c, 10)).toEqual(Array(10).fill(OK));
    expect(await codes(c, 1, 'critical')).toEqual([UNAVAILABLE]);
  });

  it('takes a claim up to max, in any letter case', async () => {
    const c = await serve({ metadata: 'x-priority', max: 'critical' });
    expect(await codes(c, 10)).toEqual(Array(10).fill(OK));
    expect(await codes(c, 2, 'CRITICAL')).toEqual([OK, UNAVAILABLE]);
  });

  it('reads an unknown, listed or repeated value as default', async () => {
    // After 8 sheddable calls in a window a ninth sheddable one is refused: each OK below was read as default.
    const c = await serve({ metadata: 'x-priority' });
    const twice = new grpc.Metadata();
    twice.add('x-priority', 'sheddable');
    twice.add('x-priority', 'sheddable');
    for (const metadata of [
      twice,
      metadataOf({ 'x-priority': 'sheddable, critical' }),
      metadataOf({ 'x-priority': 'urgent' }),
    ]) {
      expect(await codes(c, 8, 'sheddable')).toEqual(Array(8).fill(OK));
      expect(await codeOf(c, 'a', metadata)).toBe(OK);
      expect(await codes(c, 1, 'sheddable')).toEqual([UNAVAILABLE]);
      await clock.advance(1000);
    }
  });

  it('takes a function of the call, trusted, asked with the method path and the metadata', async () => {
    const asked: string[] = [];
    const c = await serve(({ path, metadata }) => {
      asked.push(path);
      return metadata.get('x-vip')[0] === '1' ? 'critical' : undefined;
    });
    expect(await codes(c, 10)).toEqual(Array(10).fill(OK));
    const vip = metadataOf({ 'x-vip': '1' });
    expect([await codeOf(c, 'a', vip), await codeOf(c, 'a', vip)]).toEqual([OK, UNAVAILABLE]);
    expect(new Set(asked)).toEqual(new Set([SAY]));
  });

  it('answers INTERNAL, and warns, when the function answers something that is not a priority', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const c = await serve(() => 'urgent' as Priority);
      const { error } = await sayOutcome(c, { text: 'a' });
      expect(error?.code).toBe(grpc.status.INTERNAL);
      expect(bed.server.handled.say).toBe(0);
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining("priority option must return 'critical', 'default', 'sheddable' or undefined"),
        { code: 'FLOODGATE_GRPC_ADMISSION_ERROR' },
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('admits a critical call into its guaranteed share of a partitioned concurrency rule where a sheddable one is refused', async () => {
    const c = await serve({ metadata: 'x-priority', max: 'critical' }, true);
    const critical = metadataOf({ 'x-priority': 'critical' });
    const sheddable = metadataOf({ 'x-priority': 'sheddable' });
    // A critical call asks (so its share is kept for it), then a sheddable one holds its share.
    expect(await codeOf(c, 'a', critical)).toBe(OK);
    const held = sayOutcome(c, { text: 'hold' }, sheddable);
    await untilHeld(bed.server, 1);
    expect(await codeOf(c, 'a', sheddable)).toBe(EXHAUSTED);
    const admitted = sayOutcome(c, { text: 'hold' }, critical);
    await untilHeld(bed.server, 2);
    expect(fg.stats(SAY)?.concurrency).toBe(2);
    for (const call of bed.server.held) call.finish();
    expect((await held).reply).toBeDefined();
    expect((await admitted).reply).toBeDefined();
  });

  it('serves the critical waiter of a queue served by priority first, though it came last', async () => {
    const queue = { metric: 'concurrency', threshold: 1, maxQueueLength: 2, prioritized: true } as const;
    const { c } = await bed.connect({ maxPushbackMs: 0 }, [
      serverInterceptor({
        floodgate: fg,
        priority: { metadata: 'x-priority', max: 'critical' },
        methods: { [SAY]: { rateLimit: queue } },
      }),
    ]);
    let entered = 0;
    const enter = fg.enter.bind(fg);
    jest.spyOn(fg, 'enter').mockImplementation((name, options) => {
      if (name === SAY) entered++;
      return enter(name, options);
    });
    const calls = [sayOutcome(c, { text: 'hold' })];
    await untilHeld(bed.server, 1);
    for (const claim of ['sheddable', 'critical']) {
      calls.push(sayOutcome(c, { text: 'hold' }, metadataOf({ 'x-priority': claim })));
      await until(() => entered === calls.length, `the ${claim} call queued`);
    }
    for (let i = 1; i <= 2; i++) {
      bed.server.held[i - 1]!.finish();
      await untilHeld(bed.server, i + 1);
    }
    bed.server.held[2]!.finish();
    expect(bed.server.held.map((call) => call.metadata.get('x-priority'))).toEqual([[], ['critical'], ['sheddable']]);
    for (const call of calls) expect((await call).reply).toBeDefined();
  });

  it('never uses a priority above max, and uses the one value sent when it is at most max (property, real calls)', async () => {
    const cap: Priority = 'default';
    const c = await serve({ metadata: 'x-priority', max: cap }, true);
    const used: Priority[] = [];
    const tryEntry = fg.tryEntry.bind(fg);
    // Records the priority each admission is given (the interceptor reuses its options object), then admits as ever.
    jest.spyOn(fg, 'tryEntry').mockImplementation((resource, options) => {
      if (resource === SAY) used.push(options?.priority ?? 'default');
      return tryEntry(resource, options);
    });
    const word = fc
      .tuple(fc.constantFrom('critical', 'default', 'sheddable'), fc.array(fc.boolean(), { maxLength: 9 }))
      .map(([w, upper]) => [...w].map((ch, i) => (upper[i] === true ? ch.toUpperCase() : ch)).join(''));
    const other = fc.stringMatching(/^[!-~]([ -~]{0,10}[!-~])?$/);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(word, other), { maxLength: 3 }), async (values) => {
        const metadata = new grpc.Metadata();
        for (const value of values) metadata.add('x-priority', value);
        used.length = 0;
        expect(await codeOf(c, 'a', metadata)).toBe(OK);
        expect(used).toHaveLength(1);
        const priority = used[0]!;
        expect(priority).not.toBe('critical');
        const claim = values.length === 1 ? values[0]!.toLowerCase() : undefined;
        const expected = claim === 'sheddable' ? 'sheddable' : 'default';
        expect(priority).toBe(expected);
      }),
      { numRuns: 40 },
    );
  });
});

describe('gRPC client priorities', () => {
  let clock: ManualClock;
  let fg: Floodgate;
  const bed = clientTestbed(() => fg);

  beforeEach(() => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock, random: () => 0.5 });
  });

  const partitioned = { methods: { [SAY]: { rateLimit: PARTITIONED } } };

  /** The partitioned scenario: a critical call asked, a sheddable one held; what the next of each gets. */
  async function nextOfEach(
    c: EchoClient,
    critical: grpc.Metadata,
    sheddable: grpc.Metadata,
  ): Promise<{ sheddable: grpc.status; critical: grpc.status }> {
    expect(await codeOf(c, 'a', critical)).toBe(OK);
    const held = sayOutcome(c, { text: 'hold' }, sheddable);
    await untilHeld(bed.server, 1);
    const refused = await codeOf(c, 'a', sheddable);
    const admitted = sayOutcome(c, { text: 'hold' }, critical);
    await untilHeld(bed.server, 2);
    for (const call of bed.server.held) call.finish();
    const result = { sheddable: refused, critical: (await admitted).error?.code ?? OK };
    expect((await held).reply).toBeDefined();
    return result;
  }

  it('gives each call the priority set in its metadata, which reaches the server too', async () => {
    const { c } = await bed.connect({ ...partitioned, priority: { metadata: 'x-priority' } });
    const critical = metadataOf({ 'x-priority': 'critical' });
    expect(await nextOfEach(c, critical, metadataOf({ 'x-priority': 'sheddable' }))).toEqual({
      sheddable: EXHAUSTED,
      critical: OK,
    });
    expect(bed.server.held.map((call) => call.metadata.get('x-priority'))).toEqual([['sheddable'], ['critical']]);
  });

  it('caps the metadata at max when one is given', async () => {
    const { c, resource } = await bed.connect({ ...partitioned, priority: { metadata: 'x-priority', max: 'default' } });
    // A critical call of the process's own asks, so its share is kept; read as default, a call
    // claiming critical has no share of its own, and the held sheddable call holds the rest.
    fg.entry(resource(SAY), { priority: 'critical' }).exit();
    const held = sayOutcome(c, { text: 'hold' }, metadataOf({ 'x-priority': 'sheddable' }));
    await untilHeld(bed.server, 1);
    const capped = await codeOf(c, 'a', metadataOf({ 'x-priority': 'critical' }));
    bed.server.held[0]!.finish();
    await held;
    expect(capped).toBe(EXHAUSTED);
  });

  it('takes a function of the call', async () => {
    const priority = ({ metadata }: { metadata: grpc.Metadata }): Priority | undefined =>
      metadata.get('x-batch')[0] === '1' ? 'sheddable' : 'critical';
    const { c } = await bed.connect({ ...partitioned, priority });
    expect(await nextOfEach(c, new grpc.Metadata(), metadataOf({ 'x-batch': '1' }))).toEqual({
      sheddable: EXHAUSTED,
      critical: OK,
    });
  });

  it('gives every attempt of a call its priority, retries included', async () => {
    const { c, resource } = await bed.connect({ priority: { metadata: 'x-priority' }, retry: { baseDelayMs: 100 } });
    const attempts: [string | undefined, Priority | undefined][] = [];
    const tryEntry = fg.tryEntry.bind(fg);
    jest.spyOn(fg, 'tryEntry').mockImplementation((name, options) => {
      if (name === resource(SAY)) attempts.push([options?.attempt, options?.priority]);
      return tryEntry(name, options);
    });
    bed.server.script.push({ code: UNAVAILABLE });
    const pending = sayOutcome(c, { text: 'script' }, metadataOf({ 'x-priority': 'sheddable' }));
    await until(() => clock.pendingSleeps === 1, 'the backoff before the retry');
    await clock.advance(50);
    expect((await pending).reply?.text).toBe('script');
    expect(attempts).toEqual([
      ['first', 'sheddable'],
      ['retry', 'sheddable'],
    ]);
  });

  it('answers INTERNAL locally, never sending the call, when the function throws', async () => {
    const { c } = await bed.connect({
      priority: () => {
        throw new Error('no priority today');
      },
    });
    const { error } = await sayOutcome(c, { text: 'a' });
    expect(error?.code).toBe(grpc.status.INTERNAL);
    expect(error?.details).toBe('Floodgate could not admit the call: Error: no priority today');
    expect(bed.server.handled.say).toBe(0);
  });
});

describe('gRPC priority options', () => {
  const fg = new Floodgate({ clock: new ManualClock(0) });

  it('names every bad priority option by its field', () => {
    expect(() =>
      serverInterceptor({
        floodgate: fg,
        priority: { metadata: 'x priority', max: 'top', header: 'x' },
      } as unknown as ServerInterceptorOptions),
    ).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_RULE',
        issues: [
          { path: 'priority.header', message: 'is not a priority option; known: metadata, max' },
          { path: 'priority.metadata', message: 'must be a metadata key (not -bin), got "x priority"' },
          { path: 'priority.max', message: 'must be one of critical, default, sheddable, got "top"' },
        ],
      }),
    );
    expect(() => clientInterceptor({ floodgate: fg, target: 'x', priority: { metadata: 'x-priority-bin' } })).toThrow(
      expect.objectContaining({
        issues: [{ path: 'priority.metadata', message: 'must be a metadata key (not -bin), got "x-priority-bin"' }],
      }),
    );
    // Shown as every option error shows a value (`show`): strings quoted, arrays and objects named.
    const shownAs: [unknown, string][] = [
      ['critical', '"critical"'],
      [7, '7'],
      [null, 'null'],
      [[], 'an array []'],
    ];
    for (const [priority, shown] of shownAs)
      expect(() =>
        clientInterceptor({ floodgate: fg, target: 'x', priority } as unknown as ClientInterceptorOptions),
      ).toThrow(
        expect.objectContaining({
          issues: [
            {
              path: 'priority',
              message: `must be a function of the call or { metadata, max }, got ${shown}`,
            },
          ],
        }),
      );
    expect(() => serverInterceptor({ floodgate: fg, priority: { metadata: 42 } } as never)).toThrow(
      /priority\.metadata: must be a metadata key \(not -bin\), got 42/,
    );
  });
});
