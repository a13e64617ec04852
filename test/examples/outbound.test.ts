import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { fetch as undiciFetch } from 'undici';
import { runStory, type Phase } from '../../examples/outbound/main';

const run = promisify(execFile);

/** Runs the story on a `ManualClock`: waits come due when no call is in flight (the story's pauses, backoffs, Retry-After). */
async function storyOnManualTime(): Promise<Phase[]> {
  const clock = new ManualClock(1_000_000);
  const fg = new Floodgate({ clock, random: () => 0 });
  let done = false;
  // Under jest, Node's own fetch reads the process's global dispatcher, not the vm context's: undici's fetch reads this one.
  const story = runStory({ floodgate: fg, fetch: (url) => undiciFetch(url) as unknown as Promise<Response> }).finally(
    () => (done = true),
  );
  const deadline = Date.now() + 20_000;
  while (!done && Date.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
    const inFlight = fg.resourceNames().some((name) => (fg.stats(name)?.concurrency ?? 0) > 0);
    if (!inFlight && clock.pendingSleeps > 0) {
      await clock.advance(0);
      if (clock.pendingSleeps > 0) await clock.advance(1000);
    }
  }
  return story;
}

describe('examples/outbound', () => {
  let phases: Phase[];
  beforeAll(async () => {
    phases = await storyOnManualTime();
  }, 30_000);

  it('answers every call while both upstreams are healthy', () => {
    expect(phases[0]!.answers).toEqual({ payments: { 200: 10 }, catalog: { 200: 10 } });
  });

  it('opens the breaker of the failing host only, its retries capped by the budget', () => {
    const { answers, upstreamRequests } = phases[1]!;
    expect(answers.catalog).toEqual({ 200: 10 });
    expect(answers.payments!.ERR_CIRCUIT_OPEN).toBeGreaterThan(15);
    const sent = answers.payments!['500']!;
    // Each call sent at most 1 + its share of the budget: 20 % of the first attempts (and what the healthy phase banked).
    expect(upstreamRequests.payments).toBeLessThanOrEqual(Math.ceil(sent * 1.2) + 2);
  });

  it('closes the breaker once payments recovers', () => {
    expect(phases[2]!.answers).toEqual({ payments: { 200: 10 } });
  });

  it('pauses the overloaded host on its Retry-After, answering locally', () => {
    const { answers, upstreamRequests } = phases[3]!;
    expect(answers.catalog).toEqual({ 503: 1, ERR_UPSTREAM_PAUSED: 9 });
    expect(upstreamRequests.catalog).toBeLessThanOrEqual(3);
  });

  it('calls the host again once the pause is over', () => {
    expect(phases[4]!.answers).toEqual({ catalog: { 200: 10 } });
  });

  it('runs on its own, through the global dispatcher and fetch, and prints the story', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, '../../examples/outbound/main.ts')],
      { timeout: 30_000 },
    );
    expect(stdout).toContain('payments fails');
    expect(stdout).toMatch(/payments: \d+ × 500, \d+ × ERR_CIRCUIT_OPEN/);
    // Real time: how many calls meet the 503 before the pause depends on the timers; the ManualClock run above is exact.
    expect(stdout).toMatch(/catalog: \d × 503, \d × ERR_UPSTREAM_PAUSED/);
    expect(stdout).toMatch(/the pause is over: catalog is called again\n {2}catalog: 10 × 200/);
  }, 30_000);
});
