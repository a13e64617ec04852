import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { runCluster } from '../../examples/cluster/main';
import { QUOTES_PER_SECOND, RATES_BREAKER } from '../../examples/cluster/instance';
import { T0 } from '../redis/support/cluster-fixture';
import { freePort, testRedisUrl } from '../support/test-services';

const redisUrl = testRedisUrl();

describe('examples/cluster', () => {
  it('serves exactly the fleet-wide limit across two processes, all decided by Redis', async () => {
    const reports = await runCluster({
      redisUrl,
      requestsEach: 15,
      prefix: `fg-test:example-cluster:${process.pid}`,
      now: T0,
    });
    expect(reports).toHaveLength(2);
    expect(new Set(reports.map((r) => r.pid)).size).toBe(2);
    expect(reports.reduce((sum, r) => sum + r.served, 0)).toBe(QUOTES_PER_SECOND);
    for (const r of reports) {
      expect(r.served + r.limited).toBe(15);
      expect(r.fallbacks).toBe(0);
    }
  }, 30_000);

  it('opens the shared circuit breaker on both processes when their failures together cross its threshold', async () => {
    const failuresEach = 6;
    // Too few for either process's breaker alone: only the shared one can open.
    expect(failuresEach).toBeLessThan(RATES_BREAKER.minRequestAmount);
    const reports = await runCluster({
      redisUrl,
      failuresEach,
      prefix: `fg-test:example-breaker:${process.pid}`,
      now: T0,
    });
    for (const r of reports) expect(r.breaker).toEqual({ state: 'open', changes: ['closed->open'], next: '503' });
  }, 30_000);

  it('exits at once, naming the URL and what to do, when no Redis answers', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const run = spawnSync(
      process.execPath,
      ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, '../../examples/cluster/main.ts')],
      {
        env: { ...process.env, REDIS_URL: url },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`examples/cluster needs a Redis: none answers at ${url} (connect ECONNREFUSED`);
    expect(run.stderr).toContain('set REDIS_URL');
    expect(run.stdout).toBe('');
  }, 30_000);
});
