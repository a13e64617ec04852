/**
 * One process of the demo: starts an instance, says `ready`, serves FG_REQUESTS requests at
 * once when told `go` on stdin, and prints what it answered as JSON.
 */
import { createInstance } from './instance';

async function main(): Promise<void> {
  const env = process.env;
  const instance = await createInstance({
    redisUrl: env.FG_REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: env.FG_PREFIX,
    ...(env.FG_NOW ? { now: () => Number(env.FG_NOW) } : {}),
  });
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  const answers = await Promise.all(Array.from({ length: Number(env.FG_REQUESTS ?? 15) }, () => instance.handle()));
  const served = answers.filter((a) => a === 'quote').length;
  process.stdout.write(`${JSON.stringify({ pid: process.pid, served, limited: answers.length - served, fallbacks: instance.fallbacks.length })}\n`);
  await instance.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
