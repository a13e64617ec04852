import {
  CircuitOpenError,
  Entry,
  FlowBlockError,
  TimeoutError,
  UpstreamPausedError,
  isBlockError,
} from '@floodgate/core';
import type { BlockEvent } from '@floodgate/core/metrics';
import { request, type Dispatcher } from 'undici';
import { Harness, waitFor } from './harness';

const BREAKER = { strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 } as const;

/** One call through `dispatcher`; its answer read whole. */
async function call(
  h: Harness,
  dispatcher: Dispatcher,
  url: string,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method?: Dispatcher.HttpMethod } = {},
): Promise<{ status: number; body: string }> {
  return h.settle(
    (async () => {
      const res = await request(url, { dispatcher, ...options });
      return { status: res.statusCode, body: await res.body.text() };
    })(),
  );
}

/** The error a call fails with. */
async function failure(h: Harness, dispatcher: Dispatcher, url: string, options = {}): Promise<Error> {
  try {
    await call(h, dispatcher, url, options);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${url} did not fail`);
}

describe('floodgateInterceptor', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.close());

  describe('circuit breakers', () => {
    it('open on the failing host only: its calls are refused unsent, the other host is unaffected', async () => {
      const failing = (await h.upstream()).always({ status: 500 });
      const healthy = await h.upstream();
      const { dispatcher } = h.agent({ circuitBreaker: BREAKER, retry: false });
      expect(await call(h, dispatcher, `${failing.origin}/a`)).toEqual({ status: 500, body: '' });
      expect(await call(h, dispatcher, `${failing.origin}/b`)).toMatchObject({ status: 500 });
      const refused = await failure(h, dispatcher, `${failing.origin}/c`);
      expect(refused).toBeInstanceOf(CircuitOpenError);
      expect(isBlockError(refused)).toBe(true);
      expect(refused).toMatchObject({ resource: failing.host, retryAfterMs: 5000 });
      expect(failing.hits).toBe(2);
      expect(await call(h, dispatcher, `${healthy.origin}/a`)).toEqual({ status: 200, body: 'ok' });
      expect(h.fg.circuitState(healthy.host)[0]!.state).toBe('closed');
    });

    it('count connection resets and refused connections as failures', async () => {
      const resetting = (await h.upstream()).always('reset');
      const { dispatcher } = h.agent({ circuitBreaker: BREAKER, retry: false });
      expect(await failure(h, dispatcher, `${resetting.origin}/`)).toMatchObject({ code: 'UND_ERR_SOCKET' });
      expect(await failure(h, dispatcher, `${resetting.origin}/`)).toMatchObject({ code: 'UND_ERR_SOCKET' });
      expect(await failure(h, dispatcher, `${resetting.origin}/`)).toBeInstanceOf(CircuitOpenError);
      const closed = await h.upstream();
      const { origin, host } = closed;
      await closed.close();
      h.upstreams.splice(h.upstreams.indexOf(closed), 1);
      expect(await failure(h, dispatcher, `${origin}/`)).toMatchObject({ code: 'ECONNREFUSED' });
      expect(h.fg.totals(host)).toMatchObject({ error: 1 });
    });

    it('count statuses by isFailure: 4xx answers are not failures by default, but may be made so', async () => {
      const lenient = (await h.upstream()).always({ status: 404 });
      const strict = (await h.upstream()).always({ status: 404 });
      const { dispatcher } = h.agent({
        circuitBreaker: BREAKER,
        hosts: { [strict.host]: { isFailure: (status) => status >= 400 } },
      });
      for (let i = 0; i < 3; i++)
        expect(await call(h, dispatcher, `${lenient.origin}/`)).toMatchObject({ status: 404 });
      expect(h.fg.totals(lenient.host)).toMatchObject({ error: 0, success: 3 });
      await call(h, dispatcher, `${strict.origin}/`);
      await call(h, dispatcher, `${strict.origin}/`);
      expect(await failure(h, dispatcher, `${strict.origin}/`)).toBeInstanceOf(CircuitOpenError);
    });
  });

  describe('timeouts', () => {
    it('abort an attempt without response headers after timeoutMs with a TimeoutError, a failure for breakers', async () => {
      const hanging = (await h.upstream()).always('hang');
      const { dispatcher } = h.agent({ timeoutMs: 250, retry: false, circuitBreaker: BREAKER });
      const pending = failure(h, dispatcher, `${hanging.origin}/slow`);
      await waitFor(() => hanging.inFlight === 1);
      await h.clock.advance(250);
      const error = await pending;
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ code: 'ERR_TIMEOUT', resource: hanging.host, timeoutMs: 250 });
      expect(h.fg.totals(hanging.host)).toMatchObject({ error: 1, timeout: 1 });
      await waitFor(() => hanging.inFlight === 0);
      expect(h.clock.pendingSleeps).toBe(0);
    });

    it('take a per-host timeout over the default', async () => {
      const hanging = (await h.upstream()).always('hang');
      const { dispatcher } = h.agent({ timeoutMs: 10_000, retry: false, hosts: { [hanging.host]: { timeoutMs: 50 } } });
      const pending = failure(h, dispatcher, `${hanging.origin}/`);
      await waitFor(() => hanging.inFlight === 1);
      await h.clock.advance(50);
      expect(await pending).toMatchObject({ timeoutMs: 50 });
    });
  });

  describe('bulkheads', () => {
    it('refuse calls over maxConcurrency per host with FlowBlockError, holding each slot until its body is read', async () => {
      // Bodies larger than undici buffers: an unread one keeps its socket, and its slot.
      const big = 'x'.repeat(4 * 1024 * 1024);
      const slow = (await h.upstream()).always('hang');
      const { dispatcher } = h.agent({ maxConcurrency: 2, retry: false });
      const first = request(`${slow.origin}/1`, { dispatcher });
      const second = request(`${slow.origin}/2`, { dispatcher });
      await waitFor(() => slow.inFlight === 2);
      const third = await failure(h, dispatcher, `${slow.origin}/3`);
      expect(third).toBeInstanceOf(FlowBlockError);
      expect(third).toMatchObject({ resource: slow.host, rule: { metric: 'concurrency', threshold: 2 } });
      expect(slow.hits).toBe(2);
      slow.release(big);
      const [a, b] = await Promise.all([first, second]);
      expect(h.concurrency(slow.host)).toBe(2);
      expect((await a.body.text()).length).toBe(big.length);
      expect(h.concurrency(slow.host)).toBe(1);
      await b.body.text();
      expect(h.concurrency(slow.host)).toBe(0);
    });

    it('queue calls over maxConcurrency and send them as slots free up; calls beyond the queue, or waiting too long, are refused', async () => {
      const slow = (await h.upstream()).always('hang');
      const { dispatcher } = h.agent({
        maxConcurrency: 2,
        queue: { maxLength: 1, maxQueueingTimeMs: 1000 },
        retry: false,
      });
      const first = call(h, dispatcher, `${slow.origin}/1`);
      const second = call(h, dispatcher, `${slow.origin}/2`);
      await waitFor(() => slow.inFlight === 2);
      expect(h.fg.getRules().flow).toEqual([
        expect.objectContaining({ resource: slow.host, threshold: 2, maxQueueLength: 1, maxQueueingTimeMs: 1000 }),
      ]);
      const third = call(h, dispatcher, `${slow.origin}/3`);
      await waitFor(() => h.fg.stats(slow.host)!.concurrency === 3);
      const fourth = await failure(h, dispatcher, `${slow.origin}/4`);
      expect(fourth).toBeInstanceOf(FlowBlockError);
      expect(fourth).toMatchObject({ resource: slow.host, retryAfterMs: undefined });
      expect(slow.hits).toBe(2);
      slow.release('done');
      expect(await first).toEqual({ status: 200, body: 'done' });
      expect(await second).toEqual({ status: 200, body: 'done' });
      await waitFor(() => slow.inFlight === 1);
      expect(slow.hits).toBe(3);
      slow.release('third');
      expect(await third).toEqual({ status: 200, body: 'third' });
      // A call that waits past maxQueueingTimeMs is refused, and never reaches the upstream.
      const holders = [call(h, dispatcher, `${slow.origin}/5`), call(h, dispatcher, `${slow.origin}/6`)];
      await waitFor(() => slow.inFlight === 2);
      const late = failure(h, dispatcher, `${slow.origin}/7`);
      await waitFor(() => h.fg.stats(slow.host)!.concurrency === 3);
      await h.clock.advance(1000);
      expect(await late).toBeInstanceOf(FlowBlockError);
      expect(slow.hits).toBe(5);
      slow.release('done');
      await Promise.all(holders);
      expect(h.concurrency(slow.host)).toBe(0);
    });
  });

  describe('upstream pushback', () => {
    it('pauses a host that answered 503 with Retry-After: later calls are refused locally until then', async () => {
      const upstream = (await h.upstream()).script({ status: 503, headers: { 'retry-after': '2' } });
      const other = await h.upstream();
      const { dispatcher } = h.agent({ retry: false });
      expect(await call(h, dispatcher, `${upstream.origin}/`)).toMatchObject({ status: 503 });
      const paused = await failure(h, dispatcher, `${upstream.origin}/`);
      expect(paused).toBeInstanceOf(UpstreamPausedError);
      expect(paused).toMatchObject({ code: 'ERR_UPSTREAM_PAUSED', retryAfterMs: 2000, resource: upstream.host });
      expect(upstream.hits).toBe(1);
      expect(await call(h, dispatcher, `${other.origin}/`)).toMatchObject({ status: 200 });
      await h.clock.advance(2000);
      expect(await call(h, dispatcher, `${upstream.origin}/`)).toMatchObject({ status: 200 });
      expect(upstream.hits).toBe(2);
    });

    it('pauses on 429 with an HTTP-date Retry-After, read against the answer’s Date header, capped at maxPauseMs', async () => {
      const date = new Date('2030-01-01T00:00:00Z');
      const upstream = (await h.upstream()).script({
        status: 429,
        headers: { date: date.toUTCString(), 'retry-after': new Date(date.getTime() + 3_600_000).toUTCString() },
      });
      const { dispatcher } = h.agent({ retry: false, pushback: { maxPauseMs: 30_000 } });
      await call(h, dispatcher, `${upstream.origin}/`);
      expect(await failure(h, dispatcher, `${upstream.origin}/`)).toMatchObject({ retryAfterMs: 30_000 });
    });

    it('sends on whatever the upstream asked when pushback is off', async () => {
      const upstream = (await h.upstream()).script({ status: 503, headers: { 'retry-after': '60' } });
      const { dispatcher } = h.agent({ retry: false, pushback: false });
      await call(h, dispatcher, `${upstream.origin}/`);
      expect(await call(h, dispatcher, `${upstream.origin}/`)).toMatchObject({ status: 200 });
    });
  });

  describe('events and statistics', () => {
    it('announce blocks of host resources like any other, and count their calls', async () => {
      const failing = (await h.upstream()).always({ status: 500 });
      const { dispatcher } = h.agent({ circuitBreaker: BREAKER, retry: false });
      const blocks: BlockEvent[] = [];
      h.fg.on('block', (event) => blocks.push(event));
      await call(h, dispatcher, `${failing.origin}/`);
      await call(h, dispatcher, `${failing.origin}/`);
      await failure(h, dispatcher, `${failing.origin}/`);
      expect(blocks).toEqual([expect.objectContaining({ resource: failing.host, ruleId: 'circuitBreaker#0' })]);
      expect(h.fg.totals(failing.host)).toMatchObject({ pass: 2, block: 1, error: 2 });
      expect(h.fg.resourceNames()).toEqual([failing.host]);
      expect(h.fg.tryEntry(failing.host)).not.toBeInstanceOf(Entry);
    });
  });
});
