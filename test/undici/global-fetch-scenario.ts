/**
 * Run as its own Node process by global-fetch.test.ts (`node --expose-gc --conditions=@floodgate/source
 * --import tsx`): Node's global `fetch` reads the global dispatcher of the process's own realm,
 * which a jest test (in a vm context of its own) cannot set. Prints what it observed as one JSON
 * line; the test asserts on it.
 */
import { getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { Harness, waitFor } from './harness';

type Outcome = { status: number; body: string } | { error: string; cause: string | undefined; blocked: boolean };

async function main(): Promise<void> {
  const h = new Harness();
  const previous = getGlobalDispatcher();
  const failing = (await h.upstream()).always({ status: 500 });
  const healthy = await h.upstream();
  const pushing = (await h.upstream()).script({ status: 429, headers: { 'retry-after': '1' } });
  const big = (await h.upstream()).always({ status: 200, body: 'x'.repeat(4 * 1024 * 1024) });
  const { dispatcher } = h.agent({
    circuitBreaker: { strategy: 'errorCount', threshold: 3, minRequestAmount: 1, retryTimeoutMs: 5000 },
    retry: { maxRetries: 5, budget: { minRetriesPerSecond: 0, retryRatio: 0.5 } },
  });
  setGlobalDispatcher(dispatcher);
  const plainFetch = (url: string): Promise<Outcome> =>
    h.settle(
      fetch(url).then(
        async (res) => ({ status: res.status, body: await res.text() }),
        (error: Error) => {
          const cause = error.cause as { code?: string } | undefined;
          return { error: error.name, cause: cause?.code, blocked: cause !== undefined && 'resource' in cause };
        },
      ),
    );
  const seen: Record<string, unknown> = {};
  seen.first = await plainFetch(`${failing.origin}/a`);
  seen.second = await plainFetch(`${failing.origin}/b`);
  seen.hitsAfterTwo = failing.hits;
  seen.third = await plainFetch(`${failing.origin}/c`);
  seen.refused = await plainFetch(`${failing.origin}/d`);
  seen.hitsAfterRefused = failing.hits;
  seen.breaker = h.fg.circuitState(failing.host)[0]!.state;
  seen.healthy = await plainFetch(`${healthy.origin}/`);
  seen.healthyBreaker = h.fg.circuitState(healthy.host)[0]!.state;
  seen.pushed = await plainFetch(`${pushing.origin}/`);
  seen.paused = await plainFetch(`${pushing.origin}/`);
  await h.clock.advance(1000);
  seen.resumed = await plainFetch(`${pushing.origin}/`);
  seen.pushingHits = pushing.hits;

  // A Response dropped with its body unread: collected, its entry ends and its socket is freed.
  const registry = new FinalizationRegistry<() => void>((done) => done());
  let collected = false;
  await (async () => {
    const res = await h.settle(fetch(`${big.origin}/`));
    seen.bigStatus = res.status;
    seen.heldWhileUnread = h.concurrency(big.host);
    registry.register(res, () => (collected = true));
  })();
  for (let round = 0; round < 200 && !collected; round++) {
    global.gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  seen.collected = collected;
  await waitFor(() => h.concurrency(big.host) === 0 && big.inFlight === 0);
  seen.afterCollection = { concurrency: h.concurrency(big.host), inFlight: big.inFlight };
  seen.resources = h.fg.resourceNames().sort();
  seen.hosts = [failing.host, healthy.host, pushing.host, big.host].sort();
  setGlobalDispatcher(previous);
  await h.close();
  process.stdout.write(`${JSON.stringify(seen)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
