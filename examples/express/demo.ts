/**
 * `npm run demo`: starts the Express example (app.ts) on 127.0.0.1, sends it a short burst of
 * traffic, prints how many requests passed, got 429 and got 503, and one blocked response in
 * full, then stops. Real time, about two seconds.
 * Run: `npx tsx --conditions=@floodgate/source examples/express/demo.ts`.
 */
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Floodgate } from '@floodgate/core';
import { createApp, FlakyRecommendations } from './app';

/** A response as it came over the wire. */
interface Answer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

function get(port: number, agent: Agent, path: string, user: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { 'x-user-id': user } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const lines = [`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`];
        for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode ?? 0, head: lines.join('\n'), body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const started = performance.now();
  const fg = new Floodgate();
  const upstream = new FlakyRecommendations(fg);
  const server = createApp({ floodgate: fg, recommendations: upstream }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const answers: Answer[] = [];
  const send = async (path: string, user: string): Promise<void> =>
    void answers.push(await get(port, agent, path, user));

  try {
    console.log(`Floodgate demo: examples/express on http://127.0.0.1:${port}\n`);

    // 1. A burst of profile reads: 110 callers once each, alice and the VIP 20 times each.
    const callers = [
      ...Array.from({ length: 110 }, (_, i) => `user-${i}`),
      ...Array<string>(20).fill('alice'),
      ...Array<string>(20).fill('vip'),
    ];
    await Promise.all(callers.map((user, i) => send(`/users/${i}`, user)));
    console.log(`1. ${callers.length} x GET /users/:id at once (global limit 100/s; 5/s per caller, 20/s for the VIP)`);

    // 2. A second later: recommendations while the upstream is fast, then slow (300 ms > 200 ms).
    await sleep(1100);
    await Promise.all(['alice', 'bob'].map((user) => send('/recommendations', user)));
    upstream.latencyMs = 300;
    await Promise.all(['carol', 'dave', 'erin', 'frank', 'grace'].map((user) => send('/recommendations', user)));
    const state = fg.circuitState('GET /recommendations')[0]?.state;
    await Promise.all(
      ['alice', 'bob', 'heidi', 'ivan', 'judy', 'mallory', 'oscar', 'peggy'].map((user) =>
        send('/recommendations', user),
      ),
    );
    console.log(
      `2. 15 x GET /recommendations: 2 fast, 5 slow (the breaker is now ${state}), then 8 more (stale fallback for alice and bob, 503 for the others)\n`,
    );
  } finally {
    agent.destroy();
    server.close();
  }

  const count = (test: (status: number) => boolean): number => answers.filter((a) => test(a.status)).length;
  const stale = answers.filter((a) => a.status === 200 && a.body.includes('"stale":true')).length;
  console.log(`Sent ${answers.length} requests:`);
  console.log(
    `  passed (2xx): ${count((s) => s >= 200 && s < 300)}  (${stale} of them stale recommendations from the fallback)`,
  );
  console.log(`  429 Too Many Requests: ${count((s) => s === 429)}`);
  console.log(`  503 Service Unavailable: ${count((s) => s === 503)}`);
  const blocked = answers.find((a) => a.status === 429) ?? answers.find((a) => a.status === 503);
  if (blocked !== undefined) console.log(`\nOne blocked response, in full:\n\n${blocked.head}\n\n${blocked.body}\n`);
  console.log(`Done in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
