/**
 * The engine on its own: a QPS limit, a throttling queue and a concurrency limit on three
 * resources, driven for a moment with real time. Run: `npx tsx --conditions=@floodgate/source examples/core/quickstart.ts`.
 */
import { Floodgate, isBlockError } from '@floodgate/core';

export async function main(fg = new Floodgate()): Promise<Record<string, { passed: number; blocked: number }>> {
  fg.loadFlowRules([
    { resource: 'search', threshold: 5 },
    { resource: 'export', behavior: 'throttle', threshold: 20, maxQueueingTimeMs: 100 },
    { resource: 'report', metric: 'concurrency', threshold: 2 },
  ]);
  const tally: Record<string, { passed: number; blocked: number }> = {};
  const count = (resource: string, passed: boolean): void => {
    const t = (tally[resource] ??= { passed: 0, blocked: 0 });
    if (passed) t.passed++;
    else t.blocked++;
  };

  for (let i = 0; i < 20; i++) {
    const entry = fg.tryEntry('search');
    count('search', !isBlockError(entry));
    if (!isBlockError(entry)) entry.exit();
  }

  await Promise.all(
    Array.from({ length: 10 }, () =>
      fg.run('export', () => count('export', true), { blockHandler: () => count('export', false) }),
    ),
  );

  const held = [fg.tryEntry('report'), fg.tryEntry('report'), fg.tryEntry('report')];
  for (const entry of held) count('report', !isBlockError(entry));
  for (const entry of held) if (!isBlockError(entry)) entry.exit();
  return tally;
}

if (require.main === module) {
  void main().then((tally) => {
    for (const [resource, { passed, blocked }] of Object.entries(tally)) {
      console.log(`${resource.padEnd(8)} passed ${String(passed).padStart(2)}  blocked ${String(blocked).padStart(2)}`);
    }
  });
}
