/**
 * Runs one core case in a loop, for profiling its hot path:
 *
 *   npm run build && npx tsc -p bench
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/dist/profile/profile-case.js fg.sync.qps 5
 *   node bench/dist/profile/summarize-profile.js /tmp/prof/<file>.cpuprofile
 *
 * Every case is set up and warmed first (as in the core suite, up to 20,000 calls or 50 ms each), then the chosen one runs for the
 * given seconds (default 5).
 */
import { coreCases } from '../core/core-cases';

const WARM_MS = 50;

async function main(): Promise<void> {
  const [id, seconds] = process.argv.slice(2);
  const cases = coreCases();
  const chosen = cases.find((c) => c.id === id);
  if (chosen === undefined) throw new Error(`unknown case ${String(id)}; known: ${cases.map((c) => c.id).join(', ')}`);
  if (chosen.pending !== undefined) throw new Error(`${chosen.id} is pending: ${chosen.pending}`);
  const fns = new Map<string, () => unknown>();
  for (const c of cases) if (c.pending === undefined) fns.set(c.id, await c.setup());
  // Every case is warmed, as in the suite (call sites see what they see there), but for at most
  // WARM_MS each, so a slow case (a Prometheus scrape) does not fill the profile.
  for (const [caseId, fn] of fns) {
    const isAsync = cases.find((c) => c.id === caseId)!.async;
    const until = performance.now() + WARM_MS;
    for (let i = 0; i < 20_000 && (i % 256 !== 0 || performance.now() < until); i++) {
      if (isAsync) await fn();
      else fn();
    }
  }
  const fn = fns.get(chosen.id)!;
  const end = performance.now() + Number(seconds ?? 5) * 1000;
  let calls = 0;
  while (performance.now() < end) {
    if (chosen.async) for (let i = 0; i < 1000; i++) await fn();
    else for (let i = 0; i < 10_000; i++) fn();
    calls += chosen.async ? 1000 : 10_000;
  }
  console.log(`${chosen.id}: ${calls.toLocaleString('en-US')} calls`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
