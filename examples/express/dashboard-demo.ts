/**
 * `npm run demo:dashboard`: the Express example (app.ts) with the Floodgate dashboard mounted at
 * `/floodgate`, its rules kept in a file (a durable store: edits survive a restart), and
 * steady traffic: profile reads from a few callers (some over their per-caller limit), and a
 * recommendations upstream that turns slow every 20 s so its breaker opens and closes.
 * Prints the dashboard's URL and token, and runs until Ctrl-C (or `--seconds N`).
 * Run: `npx tsx --conditions=@floodgate/source examples/express/dashboard-demo.ts [--seconds N] [--port P]`.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource } from '@floodgate/core/rules';
import { dashboard } from '@floodgate/dashboard';
import { createApp, FlakyRecommendations } from './app';

/** What the demo runs: the app with the dashboard, and a way to stop it. */
export interface DashboardDemo {
  /** The dashboard's address. */
  readonly url: string;
  readonly token: string;
  readonly fg: Floodgate;
  /** Stops traffic, the server and the file watcher. */
  close(): Promise<void>;
}

function get(port: number, agent: Agent, path: string, user: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { 'x-user-id': user } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', () => resolve());
    req.end();
  });
}

/** Starts the app with the dashboard and traffic on 127.0.0.1. */
export async function startDashboardDemo(port = 0): Promise<DashboardDemo> {
  const fg = new Floodgate();
  const dir = join(tmpdir(), 'floodgate-demo');
  mkdirSync(dir, { recursive: true });
  const rules = fileRuleSource(fg, join(dir, 'rules.json'));
  const token = process.env.FLOODGATE_DASHBOARD_TOKEN ?? randomBytes(12).toString('hex');
  const dash = dashboard(fg, { token, store: rules });
  const upstream = new FlakyRecommendations(fg);

  const root = express();
  root.use('/floodgate', dash.express()); // before the API, so its global limit does not count the page
  root.use(createApp({ floodgate: fg, recommendations: upstream }));
  const server = root.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });

  let ticks = 0;
  const traffic = setInterval(() => {
    const second = Math.floor(ticks++ / 4);
    for (let i = 0; i < 12; i++) void get(address, agent, `/users/${i}`, ['alice', 'bob', 'carol', 'vip'][i % 4]!);
    upstream.latencyMs = second % 20 >= 8 && second % 20 < 14 ? 300 : 20; // slow for 6 s of every 20: the breaker opens, then closes
    for (let i = 0; i < 3; i++) void get(address, agent, '/recommendations', `user-${i}`);
  }, 250);

  return {
    url: `http://127.0.0.1:${address}/floodgate/`,
    token,
    fg,
    close: async () => {
      clearInterval(traffic);
      rules.close();
      dash.close();
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string): number | undefined => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : Number(args[at + 1]);
  };
  const demo = await startDashboardDemo(option('--port') ?? 0);
  console.log(`Floodgate dashboard: ${demo.url}`);
  console.log(`Token for editing rules: ${demo.token}`);
  console.log('Traffic is running (profile reads, and recommendations that turn slow every 20 s). Ctrl-C to stop.');
  const seconds = option('--seconds');
  const stop = (): void => void demo.close().then(() => process.exit(0));
  if (seconds !== undefined) setTimeout(stop, seconds * 1000);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
