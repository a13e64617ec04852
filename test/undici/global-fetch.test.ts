import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The README's one line, `setGlobalDispatcher(new Agent().compose(floodgateInterceptor()))`,
 * guards Node's own global `fetch` (Node 20 bundles an older undici, which reads the global
 * dispatcher npm's undici sets). Jest runs tests in a vm context whose global is not the one
 * Node's fetch reads, so the scenario runs as a process of its own and reports what it saw.
 */
describe("Node's global fetch through setGlobalDispatcher", () => {
  let seen: Record<string, unknown>;
  beforeAll(async () => {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, 'global-fetch-scenario.ts')],
      { timeout: 60_000 },
    );
    seen = JSON.parse(stdout) as Record<string, unknown>;
  }, 60_000);

  it('names each host a resource', () => {
    expect(seen.resources).toEqual(seen.hosts);
  });

  it('caps retries by the budget: two first attempts earn one retry', () => {
    expect(seen.first).toEqual({ status: 500, body: '' });
    expect(seen.second).toEqual({ status: 500, body: '' });
    expect(seen.hitsAfterTwo).toBe(3);
  });

  it('opens the breaker of the failing host: fetch rejects with the block error as its cause, unsent', () => {
    expect(seen.breaker).toBe('open');
    expect(seen.refused).toEqual({ error: 'TypeError', cause: 'ERR_CIRCUIT_OPEN', blocked: true });
    expect(seen.hitsAfterRefused).toBe(4);
  });

  it('leaves other hosts unaffected', () => {
    expect(seen.healthy).toEqual({ status: 200, body: 'ok' });
    expect(seen.healthyBreaker).toBe('closed');
  });

  it('honours pushback: a 429 with Retry-After pauses the host until then', () => {
    expect(seen.pushed).toMatchObject({ status: 429 });
    expect(seen.paused).toEqual({ error: 'TypeError', cause: 'ERR_UPSTREAM_PAUSED', blocked: true });
    expect(seen.resumed).toEqual({ status: 200, body: 'ok' });
    expect(seen.pushingHits).toBe(2);
  });

  it('ends the entry of a Response collected with its body unread, and frees its socket', () => {
    expect(seen.bigStatus).toBe(200);
    expect(seen.heldWhileUnread).toBe(1);
    expect(seen.collected).toBe(true);
    expect(seen.afterCollection).toEqual({ concurrency: 0, inFlight: 0 });
  });
});
