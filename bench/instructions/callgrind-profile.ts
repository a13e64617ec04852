/**
 * Reads a callgrind profile (its own text format): each function's own instructions and the
 * inclusive instructions of the calls from one function to another. Names may be compressed
 * (`fn=(12) name` the first time, `fn=(12)` after); `name` turns a given one (a JIT address, for
 * V8's code) into the name to report. Only the first event column (instructions) is read.
 */
export interface CallgrindCosts {
  /** Each function's own instructions (its cost lines, less the calls it makes). */
  readonly self: ReadonlyMap<string, number>;
  /** The inclusive instructions of the calls from `caller` to `callee`, keyed by {@link callKey}. */
  readonly calls: ReadonlyMap<string, number>;
  /** How many calls from `caller` to `callee` were made, keyed by {@link callKey}. */
  readonly callCounts: ReadonlyMap<string, number>;
}

/** The key of the calls from `caller` to `callee` in {@link CallgrindCosts.calls}. */
export function callKey(caller: string, callee: string): string {
  return `${callee} <- ${caller}`;
}

/** The caller and callee of a {@link callKey}. */
export function splitCallKey(key: string): { readonly caller: string; readonly callee: string } {
  const at = key.indexOf(' <- ');
  return { callee: key.slice(0, at), caller: key.slice(at + 4) };
}

export function readCallgrind(profile: string, name: (given: string) => string = (given) => given): CallgrindCosts {
  const names = new Map<string, string>();
  const named = (spec: string): string => {
    const compressed = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (compressed === null) return name(spec);
    if (compressed[2] !== undefined) names.set(compressed[1]!, name(compressed[2]));
    return names.get(compressed[1]!) ?? `(${compressed[1]!})`;
  };
  const self = new Map<string, number>();
  const calls = new Map<string, number>();
  const callCounts = new Map<string, number>();
  let fn: string | undefined;
  let callee = '';
  let callCost = false;
  let made = 0;
  for (const line of profile.split('\n')) {
    if (line.startsWith('fn=')) fn = named(line.slice(3));
    else if (line.startsWith('cfn=')) callee = named(line.slice(4));
    else if (line.startsWith('calls=')) {
      callCost = true;
      made = Number(/^calls=(\d+)/.exec(line)?.[1] ?? 0);
    } else {
      const cost = /^(?:[+-]?\d+|\*) (\d+)/.exec(line);
      if (cost === null || fn === undefined) continue;
      const instructions = Number(cost[1]);
      if (callCost) {
        callCost = false;
        const key = callKey(fn, callee);
        calls.set(key, (calls.get(key) ?? 0) + instructions);
        callCounts.set(key, (callCounts.get(key) ?? 0) + made);
      } else self.set(fn, (self.get(fn) ?? 0) + instructions);
    }
  }
  return { self, calls, callCounts };
}
