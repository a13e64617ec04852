import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { request, type Dispatcher } from 'undici';
import { Harness, waitFor } from './harness';

type Options = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

async function call(h: Harness, dispatcher: Dispatcher, url: string, options: Partial<Options> = {}) {
  return h.settle(
    (async () => {
      const res = await request(url, { dispatcher, ...options } as Options);
      return { status: res.statusCode, body: await res.body.text() };
    })(),
  );
}

describe('retries', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.close());

  it('retry an idempotent call after a 503 and answer with the retry', async () => {
    const upstream = (await h.upstream()).script({ status: 503, body: 'busy' });
    const { dispatcher } = h.agent();
    expect(await call(h, dispatcher, `${upstream.origin}/a`)).toEqual({ status: 200, body: 'ok' });
    expect(upstream.seen).toEqual(['/a', '/a']);
    expect(h.fg.totals(upstream.host)).toMatchObject({ pass: 2, success: 2, error: 1 });
  });

  it('retry after a connection reset', async () => {
    const upstream = (await h.upstream()).script('reset');
    const { dispatcher } = h.agent();
    expect(await call(h, dispatcher, `${upstream.origin}/a`)).toMatchObject({ status: 200 });
    expect(upstream.hits).toBe(2);
  });

  it('retry at most maxRetries times, then answer the last failure as it came', async () => {
    const upstream = (await h.upstream()).always({ status: 502, body: 'bad gateway' });
    const { dispatcher } = h.agent({ retry: { maxRetries: 3 } });
    expect(await call(h, dispatcher, `${upstream.origin}/`)).toEqual({ status: 502, body: 'bad gateway' });
    expect(upstream.hits).toBe(4);
  });

  it('never retry a POST, unless it carries an idempotency key', async () => {
    const upstream = (await h.upstream()).always({ status: 503 });
    const { dispatcher } = h.agent();
    expect(await call(h, dispatcher, `${upstream.origin}/`, { method: 'POST', body: 'x' })).toMatchObject({
      status: 503,
    });
    expect(upstream.hits).toBe(1);
    await call(h, dispatcher, `${upstream.origin}/`, {
      method: 'POST',
      body: 'x',
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(upstream.hits).toBe(1 + 3);
  });

  it('retry the methods the options list', async () => {
    const upstream = (await h.upstream()).always({ status: 503 });
    const { dispatcher } = h.agent({ retry: { methods: ['POST'], maxRetries: 1 } });
    await call(h, dispatcher, `${upstream.origin}/`, { method: 'POST', body: 'x' });
    expect(upstream.hits).toBe(2);
    await call(h, dispatcher, `${upstream.origin}/`);
    expect(upstream.hits).toBe(3);
  });

  it('never retry a request whose body is a stream: it cannot be sent again', async () => {
    const upstream = (await h.upstream()).always({ status: 503 });
    const { dispatcher } = h.agent();
    const body = Readable.from([Buffer.from('chunk')]);
    expect(await call(h, dispatcher, `${upstream.origin}/`, { method: 'PUT', body })).toMatchObject({ status: 503 });
    expect(upstream.hits).toBe(1);
  });

  it('wait out the Retry-After asked for before the retry, through the engine clock', async () => {
    const upstream = (await h.upstream()).script({ status: 503, headers: { 'retry-after': '3' } });
    const { dispatcher } = h.agent();
    const pending = call(h, dispatcher, `${upstream.origin}/`);
    await waitFor(() => h.clock.pendingSleeps === 1 && upstream.hits === 1);
    await h.clock.advance(2999);
    expect(upstream.hits).toBe(1);
    await h.clock.advance(1);
    expect(await pending).toMatchObject({ status: 200 });
    expect(upstream.hits).toBe(2);
  });

  it('answer at once, without a retry, when Retry-After asks for more than maxRetryAfterMs', async () => {
    const upstream = (await h.upstream()).script({ status: 503, headers: { 'retry-after': '120' } });
    const { dispatcher } = h.agent({ retry: { maxRetryAfterMs: 10_000 } });
    expect(await call(h, dispatcher, `${upstream.origin}/`)).toMatchObject({ status: 503 });
    expect(upstream.hits).toBe(1);
  });

  it('back off with full jitter: retry n waits random × min(maxDelayMs, baseDelayMs × 2^(n−1))', async () => {
    const upstream = (await h.upstream()).script({ status: 503 }, { status: 503 }, { status: 503 });
    const { dispatcher } = h.agent({ retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300 } });
    h.draw.next = 0.5;
    const pending = request(`${upstream.origin}/`, { dispatcher });
    for (const expected of [50, 100, 150]) {
      const hits = upstream.hits;
      await waitFor(() => h.clock.pendingSleeps === 1 && upstream.hits === hits + 1);
      await h.clock.advance(expected - 1);
      expect(upstream.hits).toBe(hits + 1);
      await h.clock.advance(1);
    }
    const res = await pending;
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(upstream.hits).toBe(4);
  });

  it('answer the last failure when the retry budget refuses a retry, and count the block', async () => {
    const upstream = (await h.upstream()).always({ status: 503, body: 'down' });
    const { dispatcher } = h.agent({ retry: { budget: { minRetriesPerSecond: 0, retryRatio: 0.5 } } });
    // First call: 0.5 retries earned: none may be sent.
    expect(await call(h, dispatcher, `${upstream.origin}/`)).toEqual({ status: 503, body: 'down' });
    expect(upstream.hits).toBe(1);
    // Second call: one retry earned between the two first attempts.
    await call(h, dispatcher, `${upstream.origin}/`);
    expect(upstream.hits).toBe(3);
    expect(h.fg.blocksByRule(upstream.host)).toEqual([{ kind: 'retryBudget', ruleId: 'retryBudget#0', count: 2 }]);
  });

  it('cap the load on a failing upstream at about 1 + retryRatio of the calls made', async () => {
    const upstream = (await h.upstream()).always({ status: 503 });
    const { dispatcher } = h.agent({ retry: { maxRetries: 5, budget: { minRetriesPerSecond: 1 } } });
    for (let i = 0; i < 100; i++) await call(h, dispatcher, `${upstream.origin}/`);
    // 100 first attempts earn 20 retries; the reserve is 1 × 10 s.
    expect(upstream.hits).toBeLessThanOrEqual(100 + 20 + 10);
    expect(upstream.hits / 100).toBeLessThanOrEqual(1.3);
  });

  it('send no retry after the caller aborted, and leave no timer behind', async () => {
    const upstream = (await h.upstream()).always({ status: 503, headers: { 'retry-after': '5' } });
    const { dispatcher } = h.agent({ pushback: false });
    const controller = new AbortController();
    const pending = request(`${upstream.origin}/`, { dispatcher, signal: controller.signal }).catch((e: Error) => e);
    await waitFor(() => h.clock.pendingSleeps === 1);
    controller.abort(new Error('caller gave up'));
    expect(await pending).toMatchObject({ message: 'caller gave up' });
    expect(h.clock.pendingSleeps).toBe(0);
    await h.clock.advance(10_000);
    expect(upstream.hits).toBe(1);
    expect(h.concurrency(upstream.host)).toBe(0);
  });

  it('keep a process whose only work is the call alive while a retry waits its backoff', async () => {
    const upstream = (await h.upstream()).script({ status: 503 });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--conditions=@floodgate/source',
        '--import',
        'tsx',
        join(__dirname, 'keep-alive-scenario.ts'),
        `${upstream.origin}/`,
      ],
      { timeout: 30_000 },
    );
    expect(stdout).toBe('200\n');
    expect(upstream.hits).toBe(2);
  }, 30_000);

  it('retry a timed-out attempt', async () => {
    const upstream = (await h.upstream()).script('hang');
    const { dispatcher } = h.agent({ timeoutMs: 100 });
    const pending = call(h, dispatcher, `${upstream.origin}/`);
    await waitFor(() => upstream.inFlight === 1);
    await h.clock.advance(100);
    expect(await pending).toMatchObject({ status: 200 });
    expect(h.fg.totals(upstream.host)).toMatchObject({ timeout: 1, success: 2 });
  });
});
