import * as grpc from '@grpc/grpc-js';
import { Floodgate } from '@floodgate/core';
import type { BlockEvent } from '@floodgate/core/metrics';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import { PUSHBACK_METADATA_KEY, serverInterceptor, type ServerInterceptorOptions } from '@floodgate/grpc';
import { until } from '../support/until';
import {
  echoClient,
  metadataOf,
  PATHS,
  sayOutcome,
  startChildPeer,
  startEchoServer,
  statusOf,
  untilHeld,
  untilSlotsReleased,
  type EchoClient,
  type EchoServer,
} from './grpc-harness';

const SAY = PATHS.say;

describe('serverInterceptor', () => {
  let clock: ManualClock;
  let probe: ManualProbe;
  let fg: Floodgate;
  let server: EchoServer | undefined;
  let client: EchoClient | undefined;

  beforeEach(() => {
    clock = new ManualClock(1000);
    probe = new ManualProbe();
    fg = new Floodgate({ clock, probe });
  });

  afterEach(async () => {
    // However each scenario ended, every call it made gave its slot back, before the server stops.
    await untilSlotsReleased(fg);
    client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  async function serve(options: Omit<ServerInterceptorOptions, 'floodgate'> = {}): Promise<EchoClient> {
    server = await startEchoServer([serverInterceptor({ floodgate: fg, ...options })]);
    client = echoClient(server.address);
    return client;
  }

  describe('unary calls', () => {
    it('answers RESOURCE_EXHAUSTED with the pushback past a QPS limit, and the handler never sees the call', async () => {
      const c = await serve({ methods: { [SAY]: { rateLimit: { threshold: 2 } } } });
      expect((await sayOutcome(c, { text: 'a' })).reply).toEqual({ text: 'a', index: 0 });
      expect((await sayOutcome(c, { text: 'b' })).reply).toEqual({ text: 'b', index: 0 });
      const { error } = await sayOutcome(c, { text: 'c' });
      expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(error?.details).toBe('The request rate limit of this resource was exceeded. (ERR_FLOW_BLOCKED)');
      expect(error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['1000']);
      expect(server!.handled.say).toBe(2);
      await clock.advance(1000);
      expect((await sayOutcome(c, { text: 'd' })).reply).toEqual({ text: 'd', index: 0 });
    });

    it('answers UNAVAILABLE with the time left to probing while the breaker is open', async () => {
      const c = await serve({
        eachMethod: {
          circuitBreaker: { strategy: 'errorCount', threshold: 2, minRequestAmount: 1, retryTimeoutMs: 5000 },
        },
      });
      for (let i = 0; i < 3; i++)
        expect((await sayOutcome(c, { text: 'fail:13' })).error?.code).toBe(grpc.status.INTERNAL);
      expect(fg.circuitState(SAY)[0]?.state).toBe('open');
      await clock.advance(1500);
      const { error } = await sayOutcome(c, { text: 'ok' });
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(error?.details).toBe(
        'The resource is temporarily unavailable: its circuit breaker is open. (ERR_CIRCUIT_OPEN)',
      );
      expect(error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['3500']);
      expect(server!.handled.say).toBe(3);
      await clock.advance(3500);
      expect((await sayOutcome(c, { text: 'ok' })).reply?.text).toBe('ok');
      expect(fg.circuitState(SAY)[0]?.state).toBe('closed');
    });

    it('counts only the failureCodes as failures for breakers', async () => {
      const c = await serve({
        failureCodes: [grpc.status.INTERNAL],
        methods: {
          [SAY]: {
            circuitBreaker: { strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 },
          },
        },
      });
      for (let i = 0; i < 3; i++) await sayOutcome(c, { text: `fail:${grpc.status.UNAVAILABLE}` });
      await sayOutcome(c, { text: `fail:${grpc.status.INVALID_ARGUMENT}` });
      expect(fg.circuitState(SAY)[0]?.state).toBe('closed');
      expect(fg.totals(SAY)).toMatchObject({ success: 4, error: 0 });
      await sayOutcome(c, { text: `fail:${grpc.status.INTERNAL}` });
      await sayOutcome(c, { text: `fail:${grpc.status.INTERNAL}` });
      expect(fg.circuitState(SAY)[0]?.state).toBe('open');
    });

    it('answers PERMISSION_DENIED to an origin an authority rule denies, the origin read from the named metadata key', async () => {
      const c = await serve({ origin: 'X-App' });
      fg.loadRules({ authority: [{ resource: SAY, strategy: 'deny', origins: ['crawler'] }] });
      const denied = await sayOutcome(c, { text: 'a' }, metadataOf({ 'x-app': 'crawler' }));
      expect(denied.error?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(denied.error?.details).toBe('The caller is not allowed to access this resource. (ERR_AUTHORITY_BLOCKED)');
      expect(denied.error?.metadata.get(PUSHBACK_METADATA_KEY)).toEqual([]);
      expect((await sayOutcome(c, { text: 'b' }, metadataOf({ 'x-app': 'shop' }))).reply?.text).toBe('b');
      expect((await sayOutcome(c, { text: 'c' })).reply?.text).toBe('c');
    });

    it('applies system rules to every method, as inbound calls, answering UNAVAILABLE', async () => {
      const c = await serve();
      fg.loadRules({ system: [{ maxQps: 1 }] });
      expect((await sayOutcome(c, { text: 'a' })).reply?.text).toBe('a');
      const { error } = await sayOutcome(c, { text: 'b' });
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(error?.details).toBe('The service is temporarily overloaded. (ERR_SYSTEM_BLOCKED)');
      expect(error?.metadata.get(PUSHBACK_METADATA_KEY)).toHaveLength(1);
    });

    it('limits each value of a metadata key with a hotspot rule', async () => {
      const c = await serve({ methods: { [SAY]: { hotParam: { param: 'metadata:x-user-id', threshold: 1 } } } });
      const alice = metadataOf({ 'x-user-id': 'alice' });
      expect((await sayOutcome(c, { text: 'a' }, alice)).reply).toBeDefined();
      const blocked = await sayOutcome(c, { text: 'b' }, alice);
      expect(blocked.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(blocked.error?.details).toContain('ERR_HOT_PARAM_BLOCKED');
      expect((await sayOutcome(c, { text: 'c' }, metadataOf({ 'x-user-id': 'bob' }))).reply).toBeDefined();
      expect((await sayOutcome(c, { text: 'd' })).reply).toBeDefined();
    });

    it('limits each value of a request message field, nested fields too, and only scalar values', async () => {
      const c = await serve({
        methods: {
          [SAY]: {
            hotParam: [
              { param: 'message:userId', threshold: 1 },
              { param: 'message:caller.tenant', threshold: 2 },
            ],
          },
        },
      });
      expect((await sayOutcome(c, { text: 'a', userId: 'u1', caller: { tenant: 't' } })).reply).toBeDefined();
      expect((await sayOutcome(c, { text: 'b', userId: 'u1' })).error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect((await sayOutcome(c, { text: 'c', userId: 'u2', caller: { tenant: 't' } })).reply).toBeDefined();
      expect((await sayOutcome(c, { text: 'd', userId: 'u3', caller: { tenant: 't' } })).error?.details).toContain(
        'ERR_HOT_PARAM_BLOCKED',
      );
      expect(server!.handled.say).toBe(2);
    });

    it('enforces a rule loaded from a rule source, announced by a block event and counted in the statistics', async () => {
      const c = await serve();
      const blocks: BlockEvent[] = [];
      fg.on('block', (event) => blocks.push(event));
      fg.loadRules({ flow: [{ resource: SAY, threshold: 1 }] }, { source: 'file' });
      expect(fg.describeRules()).toEqual([expect.objectContaining({ kind: 'flow', source: 'file', inForce: true })]);
      await sayOutcome(c, { text: 'a' });
      expect((await sayOutcome(c, { text: 'b' })).error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(blocks).toEqual([expect.objectContaining({ resource: SAY, ruleId: 'flow#0' })]);
      expect(fg.totals(SAY)).toMatchObject({ pass: 1, block: 1, success: 1 });
      expect(fg.blocksByRule(SAY)).toEqual([{ kind: 'flow', ruleId: 'flow#0', count: 1 }]);
    });

    it('holds the concurrency slot of a unary call until its handler answers', async () => {
      const c = await serve({ methods: { [SAY]: { rateLimit: { metric: 'concurrency', threshold: 1 } } } });
      const first = sayOutcome(c, { text: 'hold' });
      await untilHeld(server!, 1);
      expect(fg.stats(SAY)?.concurrency).toBe(1);
      expect((await sayOutcome(c, { text: 'b' })).error?.details).toBe(
        'The limit of concurrent requests to this resource was reached. (ERR_FLOW_BLOCKED)',
      );
      server!.held[0]!.finish({ text: 'done', index: 0 });
      expect((await first).reply?.text).toBe('done');
      expect(fg.stats(SAY)?.concurrency).toBe(0);
      expect((await sayOutcome(c, { text: 'c' })).reply?.text).toBe('c');
    });

    it('releases a unary call cut short by its deadline, not counted as a failure', async () => {
      const c = await serve({
        methods: {
          [SAY]: {
            rateLimit: { metric: 'concurrency', threshold: 1 },
            circuitBreaker: { strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 5000 },
          },
        },
      });
      const { error } = await sayOutcome(c, { text: 'hold' }, new grpc.Metadata(), { deadline: Date.now() + 50 });
      expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      await until(() => server!.held[0]?.cancelled() === true, 'the handler told of the deadline');
      expect(fg.stats(SAY)?.concurrency).toBe(0);
      expect(fg.totals(SAY)).toMatchObject({ success: 1, error: 0 });
      expect(fg.circuitState(SAY)[0]?.state).toBe('closed');
    });

    it('queues a call under a throttling rule and gives its place back when the client cancels it', async () => {
      const c = await serve({
        methods: { [SAY]: { rateLimit: { behavior: 'throttle', threshold: 1, maxQueueingTimeMs: 2000 } } },
      });
      expect((await sayOutcome(c, { text: 'a' })).reply?.text).toBe('a');
      const queued = sayOutcome(c, { text: 'b' });
      await until(() => clock.pendingSleeps === 1, 'the second call queued');
      await clock.advance(1000);
      expect((await queued).reply?.text).toBe('b');
      const cancelled = c.say({ text: 'c' }, () => undefined);
      await until(() => clock.pendingSleeps === 1, 'the third call queued');
      cancelled.cancel();
      await until(() => clock.pendingSleeps === 0, 'the queued wait abandoned');
      expect(server!.handled.say).toBe(2);
      expect(fg.totals(SAY)).toMatchObject({ pass: 3, cancel: 1, success: 2 });
    });
  });

  describe('streams', () => {
    const chatLimit = { methods: { [PATHS.chat]: { rateLimit: { metric: 'concurrency' as const, threshold: 1 } } } };

    it('holds a server stream slot until its last message and status', async () => {
      const c = await serve({ methods: { [PATHS.count]: { rateLimit: { metric: 'concurrency', threshold: 1 } } } });
      const stream = c.count({ text: 'hold' });
      const replies: number[] = [];
      stream.on('data', (reply: { index: number }) => replies.push(reply.index));
      const status = statusOf(stream);
      await untilHeld(server!, 1);
      server!.held[0]!.write({ text: 'x', index: 7 });
      await until(() => replies.length === 1, 'the first reply');
      expect(fg.stats(PATHS.count)?.concurrency).toBe(1);
      const second = statusOf(c.count({ text: 'more', count: 2 }));
      expect((await second).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      server!.held[0]!.finish();
      expect((await status).code).toBe(grpc.status.OK);
      expect(fg.stats(PATHS.count)?.concurrency).toBe(0);
      expect(replies).toEqual([7]);
    });

    it('releases a server stream the client cancels mid-stream', async () => {
      const c = await serve();
      const stream = c.count({ text: 'hold' });
      stream.on('data', () => undefined);
      const status = statusOf(stream);
      await untilHeld(server!, 1);
      server!.held[0]!.write({ text: 'x', index: 0 });
      expect(fg.stats(PATHS.count)?.concurrency).toBe(1);
      stream.cancel();
      expect((await status).code).toBe(grpc.status.CANCELLED);
      await until(() => server!.held[0]!.cancelled(), 'the handler told of the cancel');
      expect(fg.stats(PATHS.count)?.concurrency).toBe(0);
      expect(fg.totals(PATHS.count)).toMatchObject({ pass: 1, success: 1, error: 0 });
    });

    it('enters a client stream at its first message when a rule reads a message field', async () => {
      const c = await serve({ methods: { [PATHS.collect]: { hotParam: { param: 'message:userId', threshold: 1 } } } });
      const first = new Promise<{ text: string }>((resolve, reject) => {
        const call = c.collect((error, reply) => (error ? reject(error) : resolve(reply!)));
        call.write({ text: 'a', userId: 'u1' });
        call.write({ text: 'b', userId: 'u2' });
        call.end();
      });
      expect((await first).text).toBe('a,b');
      const blocked = await new Promise<grpc.ServiceError | null>((resolve) => {
        const call = c.collect((error) => resolve(error));
        call.write({ text: 'c', userId: 'u1' });
        call.end();
      });
      expect(blocked?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const empty = await new Promise<{ text: string }>((resolve, reject) => {
        c.collect((error, reply) => (error ? reject(error) : resolve(reply!))).end();
      });
      expect(empty.text).toBe('');
      expect(server!.handled.collect).toBe(3);
      expect(fg.totals(PATHS.collect)).toMatchObject({ pass: 2, block: 1, success: 2 });
    });

    it('holds a bidi stream slot through its messages until the server ends it', async () => {
      const c = await serve(chatLimit);
      const chat = c.chat();
      const replies: string[] = [];
      chat.on('data', (reply: { text: string }) => replies.push(reply.text));
      const status = statusOf(chat);
      chat.write({ text: 'hello' });
      await until(() => server!.held[0]?.messages.length === 1, 'the first message');
      server!.held[0]!.write({ text: 'hi', index: 0 });
      await until(() => replies.length === 1, 'the reply');
      expect((await statusOf(c.chat())).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      chat.end();
      await until(() => server!.held[0]!.ended(), 'the client half-close');
      expect(fg.stats(PATHS.chat)?.concurrency).toBe(1);
      server!.held[0]!.finish();
      expect((await status).code).toBe(grpc.status.OK);
      expect(fg.stats(PATHS.chat)?.concurrency).toBe(0);
    });

    it('releases a bidi stream whose deadline passes', async () => {
      const c = await serve(chatLimit);
      const chat = c.chat(new grpc.Metadata(), { deadline: Date.now() + 50 });
      chat.on('error', () => undefined);
      chat.write({ text: 'x' });
      expect((await statusOf(chat)).code).toBe(grpc.status.DEADLINE_EXCEEDED);
      await until(() => server!.held[0]?.cancelled() === true, 'the handler told of the deadline');
      expect(fg.stats(PATHS.chat)?.concurrency).toBe(0);
    });

    it('releases every stream in flight when the server shuts down mid-call', async () => {
      const c = await serve();
      const chat = c.chat();
      const calls = [chat, c.chat(), c.count({ text: 'hold' })];
      const statuses = calls.map((call) => {
        call.on('error', () => undefined);
        call.on('data', () => undefined);
        return statusOf(call);
      });
      chat.write({ text: 'a' });
      await untilHeld(server!, 3);
      expect(fg.stats(PATHS.chat)?.concurrency).toBe(2);
      await server!.close();
      for (const status of await Promise.all(statuses)) expect(status.code).not.toBe(grpc.status.OK);
      await until(() => server!.held.every((call) => call.cancelled()), 'every handler told');
      expect(fg.stats(PATHS.chat)?.concurrency).toBe(0);
      expect(fg.stats(PATHS.count)?.concurrency).toBe(0);
    });

    it('releases a stream whose client process is killed mid-stream (its connection lost)', async () => {
      await serve(chatLimit);
      const peer = await startChildPeer('client', server!.address);
      try {
        await until(() => server!.held[0]?.messages.length === 1, 'the child’s message');
        expect(fg.stats(PATHS.chat)?.concurrency).toBe(1);
      } finally {
        await peer.kill();
      }
      await until(() => server!.held[0]!.cancelled(), 'the handler told of the lost connection');
      expect(fg.stats(PATHS.chat)?.concurrency).toBe(0);
      expect(fg.totals(PATHS.chat)).toMatchObject({ pass: 1, success: 1, error: 0 });
    });
  });

  describe('options', () => {
    it('names every bad option and rule field', () => {
      expect(() =>
        serverInterceptor({
          floodgate: fg,
          origin: 'bad key',
          failureCodes: [0, 14, 99],
          methods: {
            Say: { rateLimit: { threshold: -1 } },
            [SAY]: { hotParam: [{ param: 'user', threshold: 1 }], circuitBreaker: { strategy: 'nope' } },
          },
          eachMethod: { rateLimit: [{ threshold: 1 }, { metric: 'qps', threshold: 'x' }], timeoutMs: 5 },
          extra: true,
        } as unknown as ServerInterceptorOptions),
      ).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_RULE',
          issues: [
            { path: 'extra', message: expect.stringContaining('is not an option') },
            { path: 'failureCodes[0]', message: 'must be a status code within [1, 16], got 0' },
            { path: 'failureCodes[2]', message: 'must be a status code within [1, 16], got 99' },
            { path: "methods['Say']", message: "must be keyed by a method path, as '/package.Service/Method'" },
            { path: "methods['Say'].rateLimit.threshold", message: expect.stringContaining('-1') },
            { path: `methods['${SAY}'].hotParam[0].param`, message: expect.stringContaining('"user"') },
            { path: `methods['${SAY}'].circuitBreaker.strategy`, message: expect.stringContaining('"nope"') },
            { path: `methods['${SAY}'].circuitBreaker.threshold`, message: expect.stringContaining('is required') },
            {
              path: `methods['${SAY}'].circuitBreaker.retryTimeoutMs`,
              message: expect.stringContaining('is required'),
            },
            { path: 'eachMethod.rateLimit[1].threshold', message: expect.stringContaining('"x"') },
            { path: 'eachMethod.timeoutMs', message: expect.stringContaining('is not a rule option') },
            { path: 'origin', message: 'must be a metadata key (not -bin), got "bad key"' },
          ],
        }),
      );
      expect(fg.getRules().flow).toEqual([]);
    });

    it('declares the rules of methods at once and those of eachMethod on a method’s first call', async () => {
      const c = await serve({
        methods: { [SAY]: { rateLimit: { threshold: 5 } } },
        eachMethod: { circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 } },
      });
      expect(fg.getRules().flow.map((rule) => rule.resource)).toEqual([SAY]);
      expect(fg.getRules().circuitBreakers).toEqual([]);
      await sayOutcome(c, { text: 'a' });
      expect(fg.getRules().circuitBreakers.map((rule) => rule.resource)).toEqual([SAY]);
    });
  });
});
