import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterSuiteProblem } from '../../../bench/cluster/cluster-suite';

describe('clusterSuiteProblem (checked before the bench measures anything)', () => {
  // This environment without a Redis URL, and the same with a PATH where nothing is found.
  const { FLOODGATE_REDIS_URL: _given, REDIS_URL: _other, ...noRedisUrl } = process.env;
  const noRedisServer = { ...noRedisUrl, PATH: mkdtempSync(join(tmpdir(), 'floodgate-no-redis-')) };

  it('names what is missing and the ways out when redis-server cannot run and no Redis URL is given', () => {
    const problem = clusterSuiteProblem(noRedisServer);
    expect(problem).toContain(
      'the cluster suite needs a Redis, and redis-server cannot run here (spawnSync redis-server ENOENT)',
    );
    expect(problem).toContain('`npm run test:services` installs redis-server');
    expect(problem).toContain('FLOODGATE_REDIS_URL names a running Redis');
    expect(problem).toContain('`--only` leaves the cluster suite out');
  });

  it('has nothing to say when a Redis URL is given, even without redis-server', () => {
    expect(clusterSuiteProblem({ ...noRedisServer, FLOODGATE_REDIS_URL: 'redis://127.0.0.1:6379' })).toBeUndefined();
    expect(clusterSuiteProblem({ ...noRedisServer, REDIS_URL: 'redis://127.0.0.1:6379' })).toBeUndefined();
  });

  it('has nothing to say when redis-server runs (npm test provides it)', () => {
    expect(clusterSuiteProblem(noRedisUrl)).toBeUndefined();
  });
});
