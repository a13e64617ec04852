/**
 * One fresh process of the outbound suite: the CPU this process spends per call (user + system,
 * `process.cpuUsage()`) calling a local server through bare undici (`request()` and `fetch()`),
 * through the Floodgate interceptor, and through cockatiel's `wrap(retry, breaker, timeout)`
 * around the same bare `fetch`; then the load amplification of a failing upstream: requests the
 * upstream saw per call made, with retries on. Prints one JSON line.
 *
 * Usage: node bench/dist/outbound/outbound-worker.js <origin> <calls> <rounds>
 */
import { setMaxListeners } from 'node:events';
import { Floodgate } from '@floodgate/core';
import { floodgateInterceptor } from '@floodgate/undici';
import {
  circuitBreaker,
  ConsecutiveBreaker,
  ExponentialBackoff,
  handleAll,
  retry,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import { Agent, fetch, request, type Dispatcher } from 'undici';

/** One case's CPU per call, in µs, per round. */
export interface OutboundCaseResult {
  readonly id: string;
  readonly name: string;
  readonly cpuUsPerCall: number[];
}

/** What one worker measured. */
export interface OutboundWorkerResult {
  readonly cases: OutboundCaseResult[];
  /** Requests a failing upstream saw per call made, with retries on: Floodgate's, and cockatiel's retry(2). */
  readonly amplification: { readonly floodgate: number; readonly cockatiel: number; readonly calls: number };
}

/** Calls in flight at once: enough to keep a connection pool busy. */
const CONCURRENCY = 16;

/** The guard measured: a breaker, retries within the budget, a timeout, pushback (the defaults) per host. */
const GUARD = {
  circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 },
  retry: { maxRetries: 2 },
  timeoutMs: 5000,
} as const;

async function main(): Promise<void> {
  // cockatiel's timeout adds one abort listener per call in flight to the signal its call is
  // given: by default its module's own `neverAbortedSignal`, made at import with the default limit
  // of 10 (so `setMaxListeners(n)` alone, which sets the default for signals made later, left
  // the warning). Its calls get a signal of ours, allowed a listener per call in flight.
  const cockatielSignal = new AbortController().signal;
  setMaxListeners(4 * CONCURRENCY, cockatielSignal);
  const [origin, callsText, roundsText] = process.argv.slice(2);
  if (origin === undefined) throw new Error('usage: outbound-worker <origin> <calls> <rounds>');
  const calls = Number(callsText ?? 20_000);
  const rounds = Number(roundsText ?? 3);
  const url = `${origin}/ok`;

  const bareAgent = new Agent({ connections: CONCURRENCY });
  const guardedAgent = new Agent({ connections: CONCURRENCY });
  const guarded = guardedAgent.compose(floodgateInterceptor({ ...GUARD, floodgate: new Floodgate() }));
  // What undici's compose() itself costs: an interceptor that passes every call on unchanged.
  const composedAgent = new Agent({ connections: CONCURRENCY });
  const composed = composedAgent.compose((dispatch) => (opts, handler) => dispatch(opts, handler));
  const cockatiel = wrap(
    retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() }),
    circuitBreaker(handleAll, { halfOpenAfter: 5000, breaker: new ConsecutiveBreaker(5) }),
    timeout(5000, TimeoutStrategy.Aggressive),
  );
  const viaRequest = (dispatcher: Dispatcher) => async () => {
    const res = await request(url, { dispatcher });
    await res.body.text();
  };
  const viaFetch = (dispatcher: Dispatcher) => async () => {
    const res = await fetch(url, { dispatcher });
    await res.text();
  };
  const cases: { id: string; name: string; call: () => Promise<void> }[] = [
    { id: 'request.bare', name: 'undici request(), bare', call: viaRequest(bareAgent) },
    {
      id: 'request.compose',
      name: 'undici request(), a no-op interceptor (compose() itself)',
      call: viaRequest(composed),
    },
    { id: 'request.floodgate', name: 'undici request(), Floodgate interceptor', call: viaRequest(guarded) },
    { id: 'fetch.bare', name: 'undici fetch(), bare', call: viaFetch(bareAgent) },
    { id: 'fetch.floodgate', name: 'undici fetch(), Floodgate interceptor', call: viaFetch(guarded) },
    {
      id: 'fetch.cockatiel',
      name: 'undici fetch(), cockatiel wrap(retry, breaker, timeout)',
      call: () => cockatiel.execute(viaFetch(bareAgent), cockatielSignal),
    },
  ];
  const results = cases.map((c) => ({ id: c.id, name: c.name, cpuUsPerCall: [] as number[] }));
  // Warm every case first, then measure each once per round, in reverse order on every other round.
  for (const c of cases) await drive(c.call, Math.min(2000, calls));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const c of order) {
      global.gc?.();
      const before = process.cpuUsage();
      await drive(c.call, calls);
      const used = process.cpuUsage(before);
      results.find((r) => r.id === c.id)!.cpuUsPerCall.push((used.user + used.system) / calls);
    }
  }

  // Amplification: every call to a failing upstream, retries on.
  const failCalls = calls;
  const failing = `${origin}/fail`;
  const amplifiedBy = async (call: () => Promise<unknown>): Promise<number> => {
    const before = await count(origin);
    await drive(async () => {
      await call().catch(() => undefined);
    }, failCalls);
    return ((await count(origin)) - before) / failCalls;
  };
  const failingAgent = new Agent({ connections: CONCURRENCY });
  const failingGuard = failingAgent.compose(
    floodgateInterceptor({ retry: { maxRetries: 2, baseDelayMs: 0 }, pushback: false, floodgate: new Floodgate() }),
  );
  const floodgate = await amplifiedBy(async () => (await request(failing, { dispatcher: failingGuard })).body.text());
  const retryOnly = retry(handleAll, { maxAttempts: 2 });
  const cockatielAmplification = await amplifiedBy(() =>
    retryOnly.execute(async () => {
      const res = await request(failing, { dispatcher: bareAgent });
      await res.body.text();
      if (res.statusCode >= 500) throw new Error(`upstream ${res.statusCode}`);
    }),
  );
  await Promise.all([bareAgent.close(), guardedAgent.close(), composedAgent.close(), failingAgent.close()]);
  const out: OutboundWorkerResult = {
    cases: results,
    amplification: { floodgate, cockatiel: cockatielAmplification, calls: failCalls },
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** `total` calls, `CONCURRENCY` at a time. */
async function drive(call: () => Promise<void>, total: number): Promise<void> {
  let started = 0;
  const lane = async (): Promise<void> => {
    while (started < total) {
      started++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

async function count(origin: string): Promise<number> {
  const res = await request(`${origin}/count`);
  return ((await res.body.json()) as { failures: number }).failures;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
