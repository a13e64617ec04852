import * as grpc from '@grpc/grpc-js';
import { CircuitOpenError, FlowBlockError, Floodgate, UpstreamPausedError } from '@floodgate/core';
import type { BlockEvent } from '@floodgate/core/metrics';
import { ManualClock } from '@floodgate/core/testing';
import { blockErrorOf, clientInterceptor, serverInterceptor, type ClientInterceptorOptions } from '@floodgate/grpc';
import { until } from '../support/until';
import { clientTestbed, echoClient, PATHS, sayOutcome, startChildPeer, statusOf, untilHeld } from './grpc-harness';

describe('clientInterceptor', () => {
  let clock: ManualClock;
  let fg: Floodgate;
  const bed = clientTestbed(() => fg);
  const connect = bed.connect;

  beforeEach(() => {
    clock = new ManualClock(1000);
    fg = new Floodgate({ clock });
  });

  const breaker = { strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 } as const;

  it('opens its breaker on a failing server and answers UNAVAILABLE locally, without sending the call', async () => {
    const { c, resource } = await connect({ eachMethod: { circuitBreaker: breaker } });
    for (let i = 0; i < 2; i++)
      expect((await sayOutcome(c, { text: 'fail:14' })).error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(fg.circuitState(resource(PATHS.say))[0]?.state).toBe('open');
    const { error } = await sayOutcome(c, { text: 'ok' });
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(error?.details).toBe(
      'The resource is temporarily unavailable: its circuit breaker is open. (ERR_CIRCUIT_OPEN)',
    );
    expect(error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['5000']);
    expect(blockErrorOf(error)).toBeInstanceOf(CircuitOpenError);
    expect(blockErrorOf(error)?.retryAfterMs).toBe(5000);
    expect(bed.server.handled.say).toBe(2);
    await clock.advance(5000);
    expect((await sayOutcome(c, { text: 'ok' })).reply?.text).toBe('ok');
    expect(fg.circuitState(resource(PATHS.say))[0]?.state).toBe('closed');
  });

  it('names its resources by target and method, which loaded rules and block events use', async () => {
    const { c, resource } = await connect();
    const blocks: BlockEvent[] = [];
    fg.on('block', (event) => blocks.push(event));
    fg.loadRules({ flow: [{ resource: resource(PATHS.say), threshold: 1 }] });
    expect((await sayOutcome(c, { text: 'a' })).reply?.text).toBe('a');
    const { error } = await sayOutcome(c, { text: 'b' });
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(blockErrorOf(error)).toBeInstanceOf(FlowBlockError);
    expect(blocks.map((event) => event.resource)).toEqual([`${bed.server.address}/floodgate.test.Echo/Say`]);
    expect(fg.totals(resource(PATHS.say))).toMatchObject({ pass: 1, block: 1, success: 1 });
    expect(bed.server.handled.say).toBe(1);
  });

  it('counts only the failureCodes as failures', async () => {
    const { c, resource } = await connect({ eachMethod: { circuitBreaker: breaker } });
    for (let i = 0; i < 3; i++) await sayOutcome(c, { text: `fail:${grpc.status.NOT_FOUND}` });
    expect(fg.circuitState(resource(PATHS.say))[0]?.state).toBe('closed');
    expect(fg.totals(resource(PATHS.say))).toMatchObject({ success: 3, error: 0 });
  });

  it('honours a Floodgate server’s pushback through the pushback kind: no call to the method until it has passed', async () => {
    const serverEngine = new Floodgate({ clock: new ManualClock(0) });
    const guard = serverInterceptor({
      floodgate: serverEngine,
      methods: { [PATHS.say]: { rateLimit: { threshold: 1 } } },
    });
    const { c, resource } = await connect({}, [guard]);
    expect((await sayOutcome(c, { text: 'a' })).reply?.text).toBe('a');
    const refused = await sayOutcome(c, { text: 'b' });
    expect(refused.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(blockErrorOf(refused.error)).toBeUndefined(); // the server's answer, not a local one
    await clock.advance(600);
    const paused = await sayOutcome(c, { text: 'c' });
    expect(paused.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(paused.error?.details).toBe(
      'A dependency asked for a pause: calls to it resume when the pause is over. (ERR_UPSTREAM_PAUSED)',
    );
    const block = blockErrorOf(paused.error);
    expect(block).toBeInstanceOf(UpstreamPausedError);
    expect(block).toMatchObject({ code: 'ERR_UPSTREAM_PAUSED', resource: resource(PATHS.say), retryAfterMs: 400 });
    expect(block?.rule).toEqual({ resource: resource(PATHS.say), maxPauseMs: 60_000 });
    expect(fg.getRules().pushback).toEqual([{ resource: resource(PATHS.say), maxPauseMs: 60_000 }]);
    expect(fg.totals(resource(PATHS.say))).toMatchObject({ pass: 2, block: 1 });
    expect(serverEngine.totals(PATHS.say)).toMatchObject({ pass: 1, block: 1 });
    await clock.advance(400);
    await (serverEngine.clock as ManualClock).advance(1000);
    expect((await sayOutcome(c, { text: 'd' })).reply?.text).toBe('d');
  });

  it('honours any server’s pushback up to maxPushbackMs, and none when maxPushbackMs is 0', async () => {
    const { c } = await connect({ maxPushbackMs: 2000 });
    await sayOutcome(c, { text: 'pushback:3600000' });
    expect(blockErrorOf((await sayOutcome(c, { text: 'a' })).error)?.retryAfterMs).toBe(2000);
    await clock.advance(2000);
    expect((await sayOutcome(c, { text: 'a' })).reply?.text).toBe('a');
    for (const malformed of ['-1', 'soon', '1.5', '']) {
      await sayOutcome(c, { text: `pushback:${malformed}` });
      expect((await sayOutcome(c, { text: 'b' })).reply?.text).toBe('b');
    }
    const ignoring = echoClient(bed.server.address, [
      clientInterceptor({ floodgate: fg, target: 'other', maxPushbackMs: 0 }),
    ]);
    try {
      await sayOutcome(ignoring, { text: 'pushback:5000' });
      expect((await sayOutcome(ignoring, { text: 'c' })).reply?.text).toBe('c');
    } finally {
      ignoring.close();
    }
  });

  it('limits concurrent streams (a bulkhead), each holding its slot until its status arrives', async () => {
    const { c, resource } = await connect({
      methods: { [PATHS.chat]: { rateLimit: { metric: 'concurrency', threshold: 1 } } },
    });
    const first = c.chat();
    const firstStatus = statusOf(first);
    first.write({ text: 'a' });
    await untilHeld(bed.server, 1);
    const second = c.chat();
    const secondStatus = statusOf(second);
    second.write({ text: 'never sent' });
    const error = await new Promise<unknown>((resolve) => second.on('error', resolve));
    expect((await secondStatus).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(blockErrorOf(error)).toBeInstanceOf(FlowBlockError);
    expect(fg.stats(resource(PATHS.chat))?.concurrency).toBe(1);
    bed.server.held[0]!.finish();
    expect((await firstStatus).code).toBe(grpc.status.OK);
    expect(fg.stats(resource(PATHS.chat))?.concurrency).toBe(0);
    expect(bed.server.handled.chat).toBe(1);
    expect(bed.server.held[0]!.messages).toEqual([{ text: 'a' }]);
  });

  it('passes the messages of every stream shape through, and ends their entries with their status', async () => {
    const { c, resource } = await connect();
    const counted: number[] = [];
    const count = c.count({ text: 'n', count: 3 });
    count.on('data', (reply: { index: number }) => counted.push(reply.index));
    expect((await statusOf(count)).code).toBe(grpc.status.OK);
    expect(counted).toEqual([0, 1, 2]);
    const collected = await new Promise<string>((resolve, reject) => {
      const call = c.collect((error, reply) => (error ? reject(error) : resolve(reply!.text)));
      call.write({ text: 'x' });
      call.write({ text: 'y' });
      call.end();
    });
    expect(collected).toBe('x,y');
    expect(fg.totals(resource(PATHS.count))).toMatchObject({ pass: 1, success: 1 });
    expect(fg.totals(resource(PATHS.collect))).toMatchObject({ pass: 1, success: 1 });
  });

  it('traces a call past its deadline as a TimeoutError: a failure and a timeout', async () => {
    const { c, resource } = await connect({ eachMethod: { circuitBreaker: breaker } });
    const { error } = await sayOutcome(c, { text: 'hold' }, new grpc.Metadata(), { deadline: Date.now() + 50 });
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(fg.totals(resource(PATHS.say))).toMatchObject({ pass: 1, success: 1, error: 1, timeout: 1 });
    await sayOutcome(c, { text: 'hold' }, new grpc.Metadata(), { deadline: Date.now() + 50 });
    expect(fg.circuitState(resource(PATHS.say))[0]?.state).toBe('open');
  });

  it('opens its breaker when the server process is killed mid-call', async () => {
    const peer = await startChildPeer('server');
    const target = `127.0.0.1:${peer.line.split(' ')[1]!}`;
    const client = bed.adopt(
      echoClient(target, [clientInterceptor({ floodgate: fg, target, eachMethod: { circuitBreaker: breaker } })]),
    );
    const resource = `${target}${PATHS.say}`;
    let inFlight: Promise<{ error?: grpc.ServiceError }>;
    try {
      expect((await sayOutcome(client, { text: 'up' })).reply?.text).toBe('up');
      inFlight = sayOutcome(client, { text: 'hold' });
      await until(() => fg.stats(resource)?.concurrency === 1, 'the call in flight');
    } finally {
      await peer.kill();
    }
    expect((await inFlight).error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(fg.stats(resource)?.concurrency).toBe(0);
    await sayOutcome(client, { text: 'again' }); // nothing listens now: UNAVAILABLE again, and the breaker opens
    expect(fg.circuitState(resource)[0]?.state).toBe('open');
    const local = await sayOutcome(client, { text: 'again' });
    expect(blockErrorOf(local.error)).toBeInstanceOf(CircuitOpenError);
  });

  it('queues a call under a throttling rule, sends what was written once admitted, and waits at most until its deadline', async () => {
    const { c, resource } = await connect({
      methods: { [PATHS.collect]: { rateLimit: { behavior: 'throttle', threshold: 1, maxQueueingTimeMs: 10_000 } } },
    });
    const collect = (deadline?: number): Promise<{ text?: string; error?: grpc.ServiceError }> =>
      new Promise((resolve) => {
        const call = c.collect(new grpc.Metadata(), deadline === undefined ? {} : { deadline }, (error, reply) =>
          resolve(error ? { error } : { text: reply!.text }),
        );
        call.write({ text: 'p' });
        call.write({ text: 'q' });
        call.end();
      });
    expect((await collect()).text).toBe('p,q');
    const queued = collect();
    await until(() => clock.pendingSleeps === 1, 'the second call queued');
    expect(bed.server.handled.collect).toBe(1);
    await clock.advance(1000);
    expect((await queued).text).toBe('p,q');
    const late = collect(Date.now() + 500); // its turn is 1000 ms away
    await until(() => clock.pendingSleeps === 2, 'the third call queued, with its deadline');
    await clock.advance(500);
    expect((await late).error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(bed.server.handled.collect).toBe(2);
    expect(fg.totals(resource(PATHS.collect))).toMatchObject({ pass: 3, cancel: 1, success: 2 });
  });

  it('gives back the place of a queued call the caller cancels', async () => {
    const { c, resource } = await connect({
      methods: { [PATHS.say]: { rateLimit: { behavior: 'throttle', threshold: 1, maxQueueingTimeMs: 10_000 } } },
    });
    await sayOutcome(c, { text: 'a' });
    const call = c.say({ text: 'b' }, () => undefined);
    const status = statusOf(call);
    await until(() => clock.pendingSleeps === 1, 'the call queued');
    call.cancel();
    expect((await status).code).toBe(grpc.status.CANCELLED);
    expect(clock.pendingSleeps).toBe(0);
    expect(fg.totals(resource(PATHS.say))).toMatchObject({ pass: 2, cancel: 1, success: 1 });
    expect(bed.server.handled.say).toBe(1);
  });

  it('names every bad option', () => {
    expect(() =>
      clientInterceptor({
        floodgate: fg,
        maxPushbackMs: -1,
        methods: { [PATHS.say]: { hotParam: { param: 'metadata:x', threshold: 1 } } },
      } as unknown as ClientInterceptorOptions),
    ).toThrow(
      expect.objectContaining({
        issues: [
          { path: `methods['${PATHS.say}'].hotParam`, message: expect.stringContaining('is not a rule option') },
          { path: 'target', message: expect.stringContaining('got undefined') },
          { path: 'maxPushbackMs', message: 'must be a number within [0, 2147483647], got -1' },
        ],
      }),
    );
  });
});
