/**
 * One process of the demo: starts an instance and says `ready`; on `go` (stdin) serves
 * FG_REQUESTS quote requests at once and prints what it answered as JSON; on `fail` serves
 * FG_FAILURES rates requests whose upstream fails and prints `failed`; on `state` waits (up to
 * 5 s) until the shared rates breaker is open here too, serves one more rates request, and
 * prints the breaker's state, its transitions and that answer as JSON.
 */
import { createInterface } from 'node:readline';
import { createInstance, type Instance } from './instance';

async function breakerReport(instance: Instance): Promise<object> {
  const deadline = Date.now() + 5000;
  while (instance.fg.circuitState('GET /rates')[0]?.state !== 'open' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return {
    state: instance.fg.circuitState('GET /rates')[0]?.state,
    changes: instance.changes.map((e) => `${e.from}->${e.to}`),
    next: await instance.rates(() => Promise.resolve('1.08')),
  };
}

async function main(): Promise<void> {
  const env = process.env;
  const instance = await createInstance({
    redisUrl: env.FG_REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: env.FG_PREFIX,
    ...(env.FG_NOW ? { now: () => Number(env.FG_NOW) } : {}),
  });
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'go') {
      const answers = await Promise.all(Array.from({ length: Number(env.FG_REQUESTS ?? 15) }, () => instance.handle()));
      const served = answers.filter((a) => a === 'quote').length;
      process.stdout.write(
        `${JSON.stringify({ pid: process.pid, served, limited: answers.length - served, fallbacks: instance.fallbacks.length })}\n`,
      );
    } else if (line === 'fail') {
      for (let i = 0; i < Number(env.FG_FAILURES ?? 6); i++)
        await instance.rates(() => Promise.reject(new Error('upstream down')));
      process.stdout.write('failed\n');
    } else if (line === 'state') {
      process.stdout.write(`${JSON.stringify(await breakerReport(instance))}\n`);
      break;
    }
  }
  await instance.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
