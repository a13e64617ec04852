/**
 * End to end, with real signals: the overload example's Express server (a CPU-bound route) in a
 * child process, sampled by the default probe, driven over HTTP from this process at about twice
 * its capacity. Asserts on statuses and counts only, never on timings.
 */
import { measureCapacity, openLoop, startServer, type ServerProcess } from '../../examples/overload/load';

const REQUESTS = 200;

describe('system protection of a CPU-bound Express app, end to end', () => {
  let server: ServerProcess | undefined;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('serves every request of the overload without a system rule (slowly)', async () => {
    server = await startServer('none');
    const capacity = await measureCapacity(server.port);
    const report = await openLoop(server.port, { ratePerSecond: 2 * capacity, count: REQUESTS, maxInFlight: 64 });
    expect(report.statuses).toEqual({ '200': REQUESTS });
  }, 120_000);

  it('sheds part of the overload with 503 while the rule is loaded, and serves everything once the load drops', async () => {
    server = await startServer('system');
    const capacity = await measureCapacity(server.port);
    const overload = await openLoop(server.port, { ratePerSecond: 2 * capacity, count: REQUESTS, maxInFlight: 64 });
    expect(overload.failed + overload.timedOut).toBe(0);
    expect(overload.statuses['503']).toBeGreaterThan(0);
    expect(overload.statuses['200']).toBeGreaterThan(0);
    expect(overload.statuses['200']! + overload.statuses['503']!).toBe(REQUESTS);
    const calm = await openLoop(server.port, { ratePerSecond: 1e9, count: 50, maxInFlight: 1 });
    expect(calm.statuses).toEqual({ '200': 50 });
  }, 120_000);
});
