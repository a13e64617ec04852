import { AdaptiveThrottlingError, Entry } from '@floodgate/core';
import { request, type Dispatcher } from 'undici';
import { Harness, waitFor } from './harness';

async function call(h: Harness, dispatcher: Dispatcher, url: string) {
  return h.settle(
    (async () => {
      const res = await request(url, { dispatcher });
      return { status: res.statusCode, body: await res.body.text() };
    })(),
  );
}

describe('hedging', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.close());

  it('sends a second attempt after delayMs without headers, answers with it, and aborts the first', async () => {
    const upstream = (await h.upstream()).script('hang');
    const { dispatcher } = h.agent({ hedge: { delayMs: 200 } });
    const pending = call(h, dispatcher, `${upstream.origin}/h`);
    await waitFor(() => upstream.inFlight === 1 && h.clock.pendingSleeps === 1);
    await h.clock.advance(199);
    expect(upstream.hits).toBe(1);
    await h.clock.advance(1);
    expect(await pending).toEqual({ status: 200, body: 'ok' });
    expect(upstream.seen).toEqual(['/h', '/h']);
    await waitFor(() => upstream.inFlight === 0);
    expect(h.concurrency(upstream.host)).toBe(0);
    expect(h.clock.pendingSleeps).toBe(0);
  });

  it('sends no hedge when the first attempt answers in time, and keeps no wait past the hedge delay', async () => {
    const upstream = await h.upstream();
    const { dispatcher } = h.agent({ hedge: { delayMs: 200 } });
    for (let i = 0; i < 3; i++) expect(await call(h, dispatcher, `${upstream.origin}/`)).toMatchObject({ status: 200 });
    // One wait for the guard's hedge deadlines, not one per call.
    expect(h.clock.pendingSleeps).toBe(1);
    await h.clock.advance(200);
    expect(h.clock.pendingSleeps).toBe(0);
    expect(upstream.hits).toBe(3);
  });

  it('spends the retry budget: with none left, no hedge is sent', async () => {
    const upstream = (await h.upstream()).script('hang');
    const { dispatcher } = h.agent({
      hedge: { delayMs: 10 },
      retry: { budget: { minRetriesPerSecond: 0, retryRatio: 0 } },
      timeoutMs: 1000,
    });
    const pending = call(h, dispatcher, `${upstream.origin}/`).catch((e: Error) => e);
    await waitFor(() => upstream.inFlight === 1);
    await h.clock.advance(10);
    expect(upstream.hits).toBe(1);
    expect(h.fg.blocksByRule(upstream.host)).toEqual([{ kind: 'retryBudget', ruleId: 'retryBudget#0', count: 1 }]);
    await h.clock.advance(990);
    expect(await pending).toMatchObject({ code: 'ERR_TIMEOUT' });
  });

  it('never hedges a call that may not be retried', async () => {
    const upstream = (await h.upstream()).script('hang');
    const { dispatcher } = h.agent({ hedge: { delayMs: 10 } });
    const pending = h.settle(
      request(`${upstream.origin}/`, { dispatcher, method: 'POST', body: 'x' }).then((res) => res.body.text()),
    );
    await waitFor(() => upstream.inFlight === 1);
    await h.clock.advance(100);
    expect(upstream.hits).toBe(1);
    upstream.release();
    expect(await pending).toBe('late');
  });

  it('waits a percentile of the resource’s response times once it has 20 calls', async () => {
    const upstream = await h.upstream();
    const { dispatcher } = h.agent({ hedge: { delayMs: 1000, percentile: 0.9 } });
    for (let i = 0; i < 20; i++) {
      const pending = call(h, dispatcher, `${upstream.origin}/`);
      await waitFor(() => upstream.hits === i + 1);
      await h.clock.advance(i < 18 ? 30 : 400);
      await pending;
    }
    // 18 of 20 calls within 50 ms (the histogram's bound over 30 ms): the 90th percentile is 50.
    upstream.script('hang');
    const pending = call(h, dispatcher, `${upstream.origin}/`);
    await waitFor(() => upstream.inFlight === 1);
    await h.clock.advance(49);
    expect(upstream.hits).toBe(21);
    await h.clock.advance(1);
    await pending;
    expect(upstream.hits).toBe(22);
  });
});

describe('adaptive throttling', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.close());

  it('sheds calls to a host that keeps failing, locally, in proportion', async () => {
    const upstream = (await h.upstream()).always({ status: 503 });
    const { dispatcher } = h.agent({ retry: false, adaptiveThrottling: {} });
    h.draw.next = 1;
    for (let i = 0; i < 4; i++) await call(h, dispatcher, `${upstream.origin}/`);
    // 4 requests, 0 accepted: p = 4/5.
    h.draw.next = 0.79;
    const shed = await h.settle(request(`${upstream.origin}/`, { dispatcher })).catch((e: Error) => e);
    expect(shed).toBeInstanceOf(AdaptiveThrottlingError);
    expect(upstream.hits).toBe(4);
    expect(h.fg.tryEntry('other')).toBeInstanceOf(Entry);
  });
});
