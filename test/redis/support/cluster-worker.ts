/**
 * One instance of a service, as a separate process: an engine on the shared Redis with one
 * global rule. Prints `ready` once connected, makes its calls when told `go` on stdin, and
 * prints how many passed. The time is fixed (FG_NOW), as two processes with synchronised clocks
 * inside one window would see it.
 */
import { Floodgate, isBlockError } from '@floodgate/core';
import { redisCluster } from '@floodgate/redis';
import Redis from 'ioredis';

async function main(): Promise<void> {
  const env = process.env;
  const client = new Redis(env.FG_REDIS_URL!);
  const backend = redisCluster({ client, prefix: env.FG_PREFIX!, now: () => Number(env.FG_NOW), timeoutMs: 2000 });
  await backend.ready();
  const fg = new Floodgate({ cluster: backend });
  fg.loadFlowRules([{ resource: 'api', threshold: Number(env.FG_THRESHOLD), cluster: { thresholdType: 'global' } }]);
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  const results = await Promise.all(
    Array.from({ length: Number(env.FG_CALLS) }, () =>
      fg
        .run('api', () => true, { blockHandler: () => false })
        .catch((error: unknown) => {
          if (isBlockError(error)) return false;
          throw error;
        }),
    ),
  );
  process.stdout.write(`${JSON.stringify({ passed: results.filter(Boolean).length })}\n`);
  await backend.close();
  client.disconnect();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
