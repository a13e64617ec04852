import { CircuitOpenError, TimeoutError, isBlockError } from '@floodgate/core';
import { guardedFetch, type GuardedFetch } from '@floodgate/undici';
import { fetch as undiciFetch } from 'undici';
import { Harness, waitFor } from './harness';

const BREAKER = { strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 5000 } as const;

describe('guardedFetch', () => {
  let h: Harness;
  const fetches: GuardedFetch[] = [];
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(async () => {
    await Promise.all(fetches.splice(0).map((f) => f.dispatcher.destroy()));
    await h.close();
  });
  function make(options: Parameters<typeof guardedFetch>[0] = {}): GuardedFetch {
    const made = guardedFetch({ floodgate: h.fg, fetch: undiciFetch as never, ...options });
    fetches.push(made);
    return made;
  }

  it('guards the fetch it is given, and rejects with the block error itself', async () => {
    const upstream = (await h.upstream()).always({ status: 500 });
    const fetch = make({ circuitBreaker: BREAKER, retry: false });
    expect((await h.settle(fetch(`${upstream.origin}/`))).status).toBe(500);
    const refused = await h.settle(fetch(`${upstream.origin}/`)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CircuitOpenError);
    expect(isBlockError(refused)).toBe(true);
    expect(upstream.hits).toBe(1);
  });

  it('answers blocks and failures with fallback', async () => {
    const upstream = (await h.upstream()).always('hang');
    const seen: unknown[] = [];
    const fetch = make({
      timeoutMs: 100,
      retry: false,
      circuitBreaker: BREAKER,
      fallback: (error) => {
        seen.push(error);
        return Response.json({ cached: true });
      },
    });
    const pending = h.settle(fetch(`${upstream.origin}/feed`));
    await waitFor(() => upstream.inFlight === 1);
    await h.clock.advance(100);
    expect(await (await pending).json()).toEqual({ cached: true });
    expect(await (await h.settle(fetch(`${upstream.origin}/feed`))).json()).toEqual({ cached: true });
    expect(seen).toEqual([expect.any(TimeoutError), expect.any(CircuitOpenError)]);
  });

  it("never gives the caller's own abort to fallback", async () => {
    const upstream = (await h.upstream()).always('hang');
    const fallback = jest.fn(() => new Response('fallback'));
    const fetch = make({ fallback });
    const controller = new AbortController();
    const pending = fetch(`${upstream.origin}/`, { signal: controller.signal }).catch((e: Error) => e);
    await waitFor(() => upstream.inFlight === 1);
    controller.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    expect(fallback).not.toHaveBeenCalled();
    await waitFor(() => h.concurrency(upstream.host) === 0);
  });

  it("uses Node's global fetch by default", async () => {
    const upstream = await h.upstream();
    const fetch = make({ fetch: undefined });
    expect(await (await h.settle(fetch(`${upstream.origin}/`))).text()).toBe('ok');
    expect(h.fg.totals(upstream.host)).toMatchObject({ pass: 1, success: 1 });
  });
});
