/**
 * One fresh process of the cluster suite: runs bench/cluster-redis.ts's `runClusterRedisBench`
 * (written with cluster mode, issue #8) once, as it is, and prints its results as one JSON line.
 *
 * Usage: node bench/dist/cluster/cluster-worker.js <redisUrl> <seconds>
 */
import { runClusterRedisBench } from '../cluster-redis';

async function main(): Promise<void> {
  const [redisUrl, seconds] = process.argv.slice(2);
  if (redisUrl === undefined) throw new Error('usage: cluster-worker <redisUrl> <seconds>');
  const results = await runClusterRedisBench({ redisUrl, seconds: Number(seconds ?? 2) });
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
