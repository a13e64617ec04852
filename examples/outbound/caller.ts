/**
 * The caller of the outbound example: every `fetch()` of the process guarded by one line,
 * `setGlobalDispatcher(new Agent().compose(floodgateInterceptor(...)))`, with a circuit breaker
 * per host, retries within the retry budget, and pushback (on by default).
 */
import { floodgate as sharedEngine, type Floodgate } from '@floodgate/core';
import { floodgateInterceptor } from '@floodgate/undici';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';

/** The guard's options: what every host gets. */
export const OUTBOUND_POLICY = {
  // Opens when more than half of at least 10 calls in 10 s fail; probes after 1 s.
  circuitBreaker: {
    strategy: 'errorRatio',
    threshold: 0.5,
    minRequestAmount: 10,
    statIntervalMs: 10_000,
    retryTimeoutMs: 1000,
  },
  // Two retries at most per call, and never more than 20 % of the calls (Finagle's budget; no
  // reserve here, so that the cap shows at this small volume).
  retry: { maxRetries: 2, budget: { minRetriesPerSecond: 0 } },
  timeoutMs: 2000,
} as const;

/** Guards every `fetch()` of the process through `floodgate`; returns what puts the previous dispatcher back. */
export function guardGlobalFetch(floodgate: Floodgate = sharedEngine): {
  dispatcher: Dispatcher;
  restore: () => Promise<void>;
} {
  const previous = getGlobalDispatcher();
  const agent = new Agent();
  const interceptor = floodgateInterceptor({ ...OUTBOUND_POLICY, floodgate });
  const dispatcher = agent.compose(interceptor);
  setGlobalDispatcher(dispatcher);
  return {
    dispatcher,
    restore: async () => {
      setGlobalDispatcher(previous);
      interceptor.withdraw();
      await agent.close();
    },
  };
}

/** One call, as the story prints it: the status, or the code of what refused or failed it. */
export async function call(url: string, fetchFn: (url: string) => Promise<Response> = fetch): Promise<string> {
  try {
    const res = await fetchFn(url);
    await res.arrayBuffer();
    return String(res.status);
  } catch (error) {
    const cause = (error as Error).cause as { code?: string } | undefined;
    return cause?.code ?? (error as Error).name;
  }
}
