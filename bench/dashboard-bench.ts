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
 * Run (from the repository root, after `tsc -b && tsc -p bench`, as `npm run bench` does):
 *   node bench/dist/dashboard-bench.js [periodSeconds=10] [rounds=3]
 * Server and measuring processes are pinned to different cores where taskset exists.
 * This is a benchmark, not a test: it prints figures and asserts nothing.
 */
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { createInterface } from 'node:readline';
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

async function main(): Promise<void> {
  if (process.argv[2] === '--serve') return serve();
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
