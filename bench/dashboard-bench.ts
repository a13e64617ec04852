/**
 * What the dashboard costs (#16):
 * 1. `entry()+exit()` with one QPS rule on an engine with a dashboard attached and no page
 *    open, against the same on an engine without one, in one fresh process (mitata, the two
 *    cases alternated over several passes; medians of the passes).
 * 2. One open page's CPU at 100 resources: a server process holds an engine with 100
 *    resources (a QPS rule each, a breaker on 10 of them) under light steady traffic (one
 *    call per resource every 100 ms) and a standalone dashboard; its `process.cpuUsage()` is
 *    read over fixed periods with no page open and with one page (an SSE client in this
 *    process) open, alternated; the page's cost is the difference, as a share of one core.
 *
 * 3. `readers`: the dashboard as a lever against the app it watches (#24). A server process
 *    holds an Express app with `GET /ping` and the dashboard mounted on the same server, an
 *    engine with 6,000 resources (4,000 of them with a QPS rule, 400 with a breaker) under light
 *    traffic; a pinger process measures `/ping` (one request at a time, every 20 ms) while this
 *    process reads `/floodgate/api/state`: alone (idle), in bursts of 200 concurrent reads, and
 *    with 200 readers reading in a loop for a period. It reports `/ping`'s p50 / p99 / max, the
 *    reads answered by status and their size.
 *
 * Run (from the repository root, after `tsc -b && tsc -p bench`, as `npm run bench` does):
 *   node bench/dist/dashboard-bench.js [periodSeconds=10] [rounds=3]
 *   node bench/dist/dashboard-bench.js readers [readers=200] [periodSeconds=5] [rounds=3]
 * Server and measuring processes are pinned to different cores where taskset exists.
 * This is a benchmark, not a test: it prints figures and asserts nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import express from 'express';
import { Floodgate, isBlockError, type Entry } from '@floodgate/core';
import { dashboard } from '@floodgate/dashboard';
import { median } from './lib/median';
import { pinnedCommand } from './lib/pinned-command';

const RESOURCES = 100;
const NEVER = 1e9;

/** Part 1: ns per entry()+exit() with and without a dashboard attached (no page). */
async function entryCost(): Promise<{ without: number; withDashboard: number }> {
  const { measure } = await import('mitata');
  const plain = new Floodgate();
  const watched = new Floodgate();
  for (const fg of [plain, watched]) fg.loadFlowRules([{ resource: 'r', threshold: NEVER }]);
  const dash = dashboard(watched, { token: 'bench-token-0123456789' });
  const pass = (fg: Floodgate) => (): void => {
    const entry = fg.tryEntry('r');
    if (isBlockError(entry)) throw new Error('should pass');
    (entry as Entry).exit();
  };
  const cases = [
    { id: 'without', fn: pass(plain), p50: [] as number[] },
    { id: 'withDashboard', fn: pass(watched), p50: [] as number[] },
  ];
  for (const c of cases) for (let i = 0; i < 1_000_000; i++) c.fn();
  for (let round = 0; round < 6; round++) {
    for (const c of round % 2 === 0 ? cases : [...cases].reverse()) {
      (globalThis as { gc?: () => void }).gc?.();
      const stats = await measure(c.fn, { min_cpu_time: 300e6 });
      c.p50.push(stats.p50);
    }
  }
  dash.close();
  return { without: median(cases[0]!.p50), withDashboard: median(cases[1]!.p50) };
}

/** The server process of part 2: answers `cpu <ms>` with its CPU over the next `ms`. */
async function serve(): Promise<void> {
  const fg = new Floodgate();
  const names = Array.from({ length: RESOURCES }, (_, i) => `GET /api/resource-${i}`);
  fg.loadRules({
    flow: names.map((resource) => ({ resource, threshold: NEVER })),
    circuitBreakers: names
      .slice(0, 10)
      .map((resource) => ({ resource, strategy: 'errorRatio' as const, threshold: 0.9, retryTimeoutMs: 5000 })),
  });
  setInterval(() => {
    for (const name of names) (fg.tryEntry(name) as Entry).exit();
  }, 100);
  const { url } = await dashboard(fg, { token: 'bench-token-0123456789' }).listen();
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    const ms = Number(line.split(' ')[1]);
    const start = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const used = process.cpuUsage(start);
    process.stdout.write(`${JSON.stringify({ cpuMs: (used.user + used.system) / 1000 })}\n`);
  }
}

/** Part 2: one page's CPU share at 100 resources, from the difference of alternated periods. */
async function pageCost(periodMs: number, rounds: number): Promise<{ idle: number[]; open: number[] }> {
  const { file, args } = pinnedCommand(0, [__filename, '--serve']);
  const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<any> => JSON.parse(((await lines.next()).value as string) ?? 'null');
  const { url } = (await next()) as { url: string };
  const cpu = async (): Promise<number> => {
    child.stdin!.write(`cpu ${periodMs}\n`);
    return ((await next()) as { cpuMs: number }).cpuMs / periodMs;
  };
  const idle: number[] = [];
  const open: number[] = [];
  await cpu(); // warm-up: the engine's windows fill
  for (let round = 0; round < rounds; round++) {
    idle.push(await cpu());
    let received = 0;
    const page = get(`${url}events`, (res) => res.on('data', (chunk: Buffer) => (received += chunk.length)));
    await new Promise((resolve) => setTimeout(resolve, 1500)); // connected, snapshot sent
    open.push(await cpu());
    page.destroy();
    if (received === 0) throw new Error('the page received nothing');
  }
  child.kill();
  return { idle, open };
}

/** The server process of part 3: an app with `/ping` and the dashboard, 6,000 resources, 4,000 rules. */
async function serveApp(): Promise<void> {
  const fg = new Floodgate();
  const names = Array.from({ length: 6000 }, (_, i) => `GET /api/resource-${i}`);
  fg.loadRules({
    flow: names.slice(0, 4000).map((resource) => ({ resource, threshold: NEVER })),
    circuitBreakers: names
      .slice(0, 400)
      .map((resource) => ({ resource, strategy: 'errorRatio' as const, threshold: 0.9, retryTimeoutMs: 5000 })),
  });
  const traffic = (): void => {
    for (const name of names) {
      const entry = fg.tryEntry(name);
      if (!isBlockError(entry)) (entry as Entry).exit();
    }
  };
  traffic();
  setInterval(traffic, 250);
  const app = express();
  app.get('/ping', (_req, res) => void res.send('pong'));
  app.use('/floodgate', dashboard(fg, { token: 'bench-token-0123456789' }).express());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
}

/** The pinger process of part 3: `start` pings every 20 ms, one at a time; `stop` prints the latencies. */
async function ping(url: string): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let running = false;
  let latencies: number[] = [];
  let loop: Promise<void> = Promise.resolve();
  const once = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const start = performance.now();
      get(`${url}/ping`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - start));
      }).on('error', reject);
    });
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'start') {
      running = true;
      latencies = [];
      loop = (async () => {
        while (running) {
          latencies.push(await once());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
    } else if (line === 'stop') {
      running = false;
      await loop;
      process.stdout.write(`${JSON.stringify(latencies)}\n`);
    }
  }
}

/** A child process speaking one JSON line per answer. */
function child(
  args: string[],
  core: number,
): { proc: ChildProcess; next: () => Promise<any>; send: (line: string) => void } {
  const { file, args: argv } = pinnedCommand(core, [__filename, ...args]);
  const proc = spawn(file, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  return {
    proc,
    next: async () => JSON.parse(((await lines.next()).value as string) ?? 'null'),
    send: (line) => void proc.stdin!.write(`${line}\n`),
  };
}

interface ReadOutcome {
  readonly status: number;
  readonly bytes: number;
}

/** One read of the dashboard's state, its body read whole and dropped. */
function read(url: string, agent: Agent): Promise<ReadOutcome> {
  return new Promise((resolve) => {
    get(`${url}/floodgate/api/state`, { agent }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', () => resolve({ status: -1, bytes }));
    }).on('error', () => resolve({ status: -1, bytes: 0 }));
  });
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function describeReads(outcomes: readonly ReadOutcome[]): string {
  const byStatus = new Map<number, number>();
  for (const { status } of outcomes) byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  const ok = outcomes.filter((o) => o.status === 200);
  const size = ok.length > 0 ? median(ok.map((o) => o.bytes)) : 0;
  const statuses = [...byStatus].map(([status, count]) => `${count} × ${status}`).join(', ');
  return `${statuses}; a 200 carries ${(size / 1024).toFixed(1)} KiB`;
}

function describePings(latencies: readonly number[]): string {
  const ms = (v: number): string => `${v.toFixed(1)} ms`;
  return `/ping p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(Math.max(...latencies))} (${latencies.length} pings)`;
}

/** Part 3: `/ping` while `readers` read the dashboard, in bursts and in a loop. */
async function readersCost(readers: number, periodMs: number, rounds: number): Promise<void> {
  const server = child(['--serve-app'], 0);
  const { url } = (await server.next()) as { url: string };
  const pinger = child(['--ping', url], 1);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const pings = async <T>(work: () => Promise<T>): Promise<[T, number[]]> => {
    pinger.send('start');
    const result = await work();
    pinger.send('stop');
    return [result, (await pinger.next()) as number[]];
  };
  await new Promise((resolve) => setTimeout(resolve, 2000)); // the windows fill
  const [, idle] = await pings(() => new Promise((resolve) => setTimeout(resolve, periodMs)));
  console.log(`idle: ${describePings(idle)}`);
  const [one, alone] = await pings(async () => {
    const outcomes: ReadOutcome[] = [];
    const end = performance.now() + periodMs;
    while (performance.now() < end) outcomes.push(await read(url, agent));
    return outcomes;
  });
  console.log(`one reader in a loop: ${describePings(alone)}; reads: ${describeReads(one)}`);
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    const [outcomes, during] = await pings(() => Promise.all(Array.from({ length: readers }, () => read(url, agent))));
    const took = performance.now() - started;
    console.log(
      `burst ${round + 1}: ${readers} concurrent reads done in ${took.toFixed(0)} ms; ${describePings(during)}; reads: ${describeReads(outcomes)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const [looped, loading] = await pings(async () => {
    const outcomes: ReadOutcome[] = [];
    const end = performance.now() + periodMs;
    await Promise.all(
      Array.from({ length: readers }, async () => {
        while (performance.now() < end) outcomes.push(await read(url, agent));
      }),
    );
    return outcomes;
  });
  console.log(
    `${readers} readers in a loop for ${periodMs / 1000} s: ${describePings(loading)}; reads: ${describeReads(looped)} (${(looped.length / (periodMs / 1000)).toFixed(0)} reads/s)`,
  );
  agent.destroy();
  server.proc.kill();
  pinger.proc.kill();
}

async function main(): Promise<void> {
  if (process.argv[2] === '--serve') return serve();
  if (process.argv[2] === '--serve-app') return serveApp();
  if (process.argv[2] === '--ping') return ping(process.argv[3]!);
  if (process.argv[2] === 'readers') {
    return readersCost(
      Number(process.argv[3] ?? 200),
      Number(process.argv[4] ?? 5) * 1000,
      Number(process.argv[5] ?? 3),
    );
  }
  const periodMs = Number(process.argv[2] ?? 10) * 1000;
  const rounds = Number(process.argv[3] ?? 3);
  const entry = await entryCost();
  console.log(
    `entry()+exit(), one QPS rule: without a dashboard ${entry.without.toFixed(1)} ns, with a dashboard and no page ${entry.withDashboard.toFixed(1)} ns (ratio ${(entry.withDashboard / entry.without).toFixed(3)})`,
  );
  const { idle, open } = await pageCost(periodMs, rounds);
  const pct = (share: number): string => `${(share * 100).toFixed(2)} %`;
  console.log(
    `server CPU at ${RESOURCES} resources, ${periodMs / 1000} s periods: no page ${idle.map(pct).join(' / ')}, one page ${open.map(pct).join(' / ')}`,
  );
  console.log(`one open page costs ${pct(median(open) - median(idle))} of a core (median of ${rounds} rounds)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
