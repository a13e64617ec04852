import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fetch as undiciFetch, request, type Dispatcher } from 'undici';
import { Harness, waitFor } from './harness';

// `gc()` without starting node with --expose-gc: the flag is honoured by contexts made after it is set.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A body larger than undici and fetch buffer: unread, it keeps its socket busy. */
const BIG = 'x'.repeat(4 * 1024 * 1024);

/** Collects garbage until `collected` holds, each round letting finalizers and I/O run (bounded rounds, no timing). */
async function collectUntil(collected: () => boolean): Promise<void> {
  for (let round = 0; round < 200 && !collected(); round++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!collected()) throw new Error('not collected after 200 rounds of gc()');
}

describe('a response body', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.close());

  async function bigUpstream() {
    return (await h.upstream()).always({ status: 200, body: BIG });
  }

  it('holds its slot while unread, and ends its entry when read to the end (request())', async () => {
    const upstream = await bigUpstream();
    const { dispatcher } = h.agent();
    const res = await h.settle(request(`${upstream.origin}/`, { dispatcher }));
    expect(h.concurrency(upstream.host)).toBe(1);
    expect((await res.body.text()).length).toBe(BIG.length);
    expect(h.concurrency(upstream.host)).toBe(0);
  });

  it('ends its entry and frees its socket when the caller destroys it unread (request())', async () => {
    const upstream = await bigUpstream();
    const { dispatcher } = h.agent();
    const res = await h.settle(request(`${upstream.origin}/`, { dispatcher }));
    res.body.destroy();
    await waitFor(() => h.concurrency(upstream.host) === 0);
    await waitFor(() => upstream.inFlight === 0);
    expect(h.fg.totals(upstream.host)).toMatchObject({ error: 0, success: 1 });
  });

  it('ends its entry when the caller cancels it (fetch)', async () => {
    const upstream = await bigUpstream();
    const { dispatcher } = h.agent();
    const res = await h.settle(undiciFetch(`${upstream.origin}/`, { dispatcher }));
    expect(h.concurrency(upstream.host)).toBe(1);
    await res.body!.cancel();
    await waitFor(() => h.concurrency(upstream.host) === 0 && upstream.inFlight === 0);
  });

  it('measures the response time to the headers by default, and to the body’s end with measure: body', async () => {
    const upstream = await bigUpstream();
    const other = await bigUpstream();
    const { dispatcher } = h.agent({ hosts: { [other.host]: { measure: 'body' } } });
    for (const target of [upstream, other]) {
      const res = await h.settle(request(`${target.origin}/`, { dispatcher }));
      await h.clock.advance(700);
      await res.body.text();
    }
    expect(h.fg.totals(upstream.host)!.rtSumMs).toBe(0);
    expect(h.fg.totals(other.host)!.rtSumMs).toBe(700);
  });

  describe('collected unread', () => {
    // (Node's global fetch: global-fetch.test.ts.) What undici's fetch does when a Response is collected with its body unread: it cancels
    // the body (its own FinalizationRegistry), which aborts the call, which ends the entry.
    async function dropUnread(fetchFn: typeof undiciFetch, dispatcher: Dispatcher, url: string, held: () => number) {
      const registry = new FinalizationRegistry<() => void>((done) => done());
      let collected = false;
      await (async () => {
        const res = await h.settle(fetchFn(url, { dispatcher }));
        expect(res.status).toBe(200);
        expect(held()).toBe(1);
        registry.register(res, () => (collected = true));
      })();
      await collectUntil(() => collected);
    }

    it('ends its entry and frees its socket (undici fetch)', async () => {
      const upstream = await bigUpstream();
      const { dispatcher } = h.agent();
      await dropUnread(undiciFetch, dispatcher, `${upstream.origin}/`, () => h.concurrency(upstream.host));
      await waitFor(() => h.concurrency(upstream.host) === 0 && upstream.inFlight === 0);
    });
  });
});
