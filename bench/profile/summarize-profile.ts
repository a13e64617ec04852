/**
 * Prints the functions of a `.cpuprofile` (from `node --cpu-prof`) by self time, with their
 * share of all samples; with a third argument, also the inclusive time (the function and what
 * it calls) of every function whose file contains that text:
 *
 *   node bench/dist/profile/summarize-profile.js <file> [top] [packages/]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

function main(): void {
  const [file, top, inclusiveFilter] = process.argv.slice(2);
  if (file === undefined)
    throw new Error('usage: summarize-profile <file.cpuprofile> [top] [file filter for inclusive times]');
  const limit = Number(top ?? 25);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const keyOf = (n: ProfileNode): string => {
    const frame = n.callFrame;
    const where =
      frame.url === ''
        ? ''
        : ` ${frame.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '')}:${frame.lineNumber + 1}`;
    return `${frame.functionName || '(anonymous)'}${where}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const node = byId.get(id)!;
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + 1);
    if (node.callFrame.functionName !== '(idle)') busy++;
    if (inclusiveFilter === undefined) continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)!;
      if (!n.callFrame.url.includes(inclusiveFilter)) continue;
      const k = keyOf(n);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + 1);
    }
  }
  const total = profile.samples.length;
  const print = (title: string, map: Map<string, number>): void => {
    console.log(`${title} (of ${total} samples; ${((busy / total) * 100).toFixed(1)} % not idle)`);
    for (const [key, n] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
      console.log(
        `${((n / total) * 100).toFixed(1).padStart(5)} %  ${((n / busy) * 100).toFixed(1).padStart(5)} % of busy  ${key}`,
      );
    }
  };
  print('self time', self);
  if (inclusiveFilter !== undefined) print(`inclusive time, files containing "${inclusiveFilter}"`, inclusive);
}

main();
