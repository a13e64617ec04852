/**
 * The outbound example: a caller and two flaky upstreams on localhost. Shows the circuit breaker
 * opening for one host (the other unaffected), the retry budget capping retries, pushback
 * pausing an overloaded host, and recovery. A few seconds of real time.
 * Run: `npx tsx --conditions=@floodgate/source examples/outbound/main.ts`.
 */
import { Floodgate } from '@floodgate/core';
import { call, guardGlobalFetch } from './caller';
import { startUpstream, type FlakyUpstream } from './upstream';

/** What one phase of the story saw: answers by kind, and the requests each upstream got. */
export interface Phase {
  readonly title: string;
  readonly answers: Readonly<Record<string, Record<string, number>>>;
  readonly upstreamRequests: Readonly<Record<string, number>>;
}

/** Options of {@link runStory}. */
export interface StoryOptions {
  /** The engine (tests pass one on a `ManualClock`). @defaultValue a new engine */
  readonly floodgate?: Floodgate;
  /**
   * The `fetch` the caller uses: Node's global one by default. (A test under jest passes undici's:
   * Node's own reads the global dispatcher of the process, not of jest's vm context.)
   */
  readonly fetch?: (url: string) => Promise<Response>;
  /** Told each phase as it ends. */
  readonly onPhase?: (phase: Phase) => void;
}

/** Runs the story; resolves with its phases. */
export async function runStory(options: StoryOptions = {}): Promise<Phase[]> {
  const fg = options.floodgate ?? new Floodgate();
  const payments = await startUpstream('payments');
  const catalog = await startUpstream('catalog');
  const guard = guardGlobalFetch(fg);
  const phases: Phase[] = [];
  const run = async (title: string, calls: readonly [FlakyUpstream, number][]): Promise<void> => {
    const before = { payments: payments.requests, catalog: catalog.requests };
    const answers: Record<string, Record<string, number>> = {};
    for (const [upstream, count] of calls) {
      const name = upstream === payments ? 'payments' : 'catalog';
      const tally = (answers[name] ??= {});
      for (let i = 0; i < count; i++) {
        const answer = await call(`${upstream.url}/`, options.fetch);
        tally[answer] = (tally[answer] ?? 0) + 1;
      }
    }
    const phase = {
      title,
      answers,
      upstreamRequests: { payments: payments.requests - before.payments, catalog: catalog.requests - before.catalog },
    };
    phases.push(phase);
    options.onPhase?.(phase);
  };
  try {
    await run('both upstreams healthy', [
      [payments, 10],
      [catalog, 10],
    ]);
    payments.mode = 'failing';
    await run('payments fails: retries within the budget, then its breaker opens; catalog unaffected', [
      [payments, 30],
      [catalog, 10],
    ]);
    payments.mode = 'healthy';
    await fg.clock.sleep(1000);
    await run('payments recovers: after retryTimeoutMs a probe closes its breaker', [[payments, 10]]);
    catalog.mode = 'overloaded';
    await run(
      'catalog answers 503 with Retry-After: 1: a retry waits it out, then the host is paused, calls refused locally',
      [[catalog, 10]],
    );
    catalog.mode = 'healthy';
    await fg.clock.sleep(1000);
    await run('the pause is over: catalog is called again', [[catalog, 10]]);
  } finally {
    await guard.restore();
    await payments.close();
    await catalog.close();
  }
  return phases;
}

if (require.main === module) {
  runStory({
    onPhase: (phase) => {
      process.stdout.write(`\n${phase.title}\n`);
      for (const [name, answers] of Object.entries(phase.answers)) {
        const text = Object.entries(answers)
          .map(([answer, n]) => `${n} × ${answer}`)
          .join(', ');
        process.stdout.write(`  ${name}: ${text} (the upstream saw ${phase.upstreamRequests[name]} requests)\n`);
      }
    },
  }).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
