import { T0 } from './support/cluster-fixture';
import { testRedisUrl } from '../support/test-services';
import { WorkerProcess } from './support/worker-process';

const redisUrl = testRedisUrl();

describe('redisCluster across processes', () => {
  it('lets two processes pass exactly the threshold between them', async () => {
    const env = {
      FG_REDIS_URL: redisUrl,
      FG_PREFIX: `fg-test:processes:${process.pid}`,
      FG_NOW: String(T0),
      FG_THRESHOLD: '7',
      FG_CALLS: '10',
    };
    const workers = [new WorkerProcess('cluster-worker.ts', env), new WorkerProcess('cluster-worker.ts', env)];
    try {
      for (const worker of workers) expect(await worker.nextLine()).toBe('ready');
      for (const worker of workers) worker.send('go');
      const results = await Promise.all(
        workers.map(async (worker) => JSON.parse(await worker.nextLine()) as { passed: number }),
      );
      expect(results[0]!.passed + results[1]!.passed).toBe(7);
    } finally {
      for (const worker of workers) worker.kill();
    }
  }, 30_000);
});
