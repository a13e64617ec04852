import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { floodgateInterceptor, type FloodgateInterceptorOptions } from '@floodgate/undici';
import { Agent, type Dispatcher } from 'undici';
import { Upstream } from './upstream';

/**
 * One test's world: an engine on a `ManualClock` with a scripted random source (0 unless a test
 * sets `draw.next`: backoffs are then 0 ms and come due at `clock.advance(0)`), real upstreams,
 * and an undici `Agent` composed with the guard. `close()` ends everything the test opened.
 */
export class Harness {
  readonly clock = new ManualClock(1_000_000);
  readonly draw = { next: 0 };
  readonly fg = new Floodgate({ clock: this.clock, random: () => this.draw.next });
  readonly upstreams: Upstream[] = [];
  private readonly agents: Agent[] = [];

  async upstream(): Promise<Upstream> {
    const upstream = await Upstream.start();
    this.upstreams.push(upstream);
    return upstream;
  }

  /** An agent composed with a guard on this engine. */
  agent(options: Omit<FloodgateInterceptorOptions, 'floodgate'> = {}): { agent: Agent; dispatcher: Dispatcher } {
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    this.agents.push(agent);
    return { agent, dispatcher: agent.compose(floodgateInterceptor({ ...options, floodgate: this.fg })) };
  }

  /**
   * Waits for `promise` while real I/O runs, waking the clock's waits that are due now (0 ms
   * backoffs) whenever one is pending, and nothing later: a test moves time itself. Bounded:
   * fails after 5 s of real time rather than hang.
   */
  async settle<T>(promise: Promise<T>): Promise<T> {
    let done = false;
    const settled = promise.then(
      (value) => {
        done = true;
        return value;
      },
      (error: unknown) => {
        done = true;
        throw error;
      },
    );
    settled.catch(() => undefined);
    const deadline = Date.now() + 5000;
    while (!done) {
      if (Date.now() > deadline) throw new Error('the call did not settle within 5 s');
      await new Promise((resolve) => setImmediate(resolve));
      if (this.clock.pendingSleeps > 0) await this.clock.advance(0);
    }
    return settled;
  }

  /** Calls in flight on a resource (0 when not tracked). */
  concurrency(resource: string): number {
    return this.fg.stats(resource)?.concurrency ?? 0;
  }

  async close(): Promise<void> {
    await Promise.all(this.agents.map((agent) => agent.destroy()));
    await Promise.all(this.upstreams.map((upstream) => upstream.close()));
  }
}

/** Lets real I/O run until `condition` holds (bounded: 2 s of real time, then it fails). */
export async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 2 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
