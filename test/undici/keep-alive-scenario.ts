/**
 * Run as its own process by retries.test.ts: one guarded call and nothing else in the process,
 * to an upstream (in the test's process) that answers 503 first. The retry's backoff waits on the
 * engine's unref'd clock; the guard must keep the process alive meanwhile. Prints the status.
 */
import { Floodgate } from '@floodgate/core';
import { floodgateInterceptor } from '@floodgate/undici';
import { Agent, request } from 'undici';

async function main(): Promise<void> {
  const dispatcher = new Agent().compose(
    floodgateInterceptor({ floodgate: new Floodgate(), retry: { baseDelayMs: 200, maxDelayMs: 200 } }),
  );
  const res = await request(process.argv[2]!, { dispatcher });
  await res.body.text();
  process.stdout.write(`${res.statusCode}\n`);
}

void main();
