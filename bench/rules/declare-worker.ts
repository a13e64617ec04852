/**
 * `node bench/dist/rules/declare-worker.js <count>`: declares `count` resources' rules one by one
 * on a fresh engine, as decorated methods and guarded routes do at boot (a flow rule and a
 * circuit breaker per resource), then calls each resource once (which compiles it), and prints
 * one JSON line with the time per declared rule of each phase. Run in a fresh process per count,
 * so one count's garbage and JIT state never colour another's.
 */
import { performance } from 'node:perf_hooks';
import { Floodgate, isBlockError, type Entry } from '@floodgate/core';

const count = Number(process.argv[2]);
if (!Number.isInteger(count) || count < 1) throw new Error('usage: declare-worker <count>');

const fg = new Floodgate();
const names = Array.from({ length: count }, (_, i) => `Service${i % 50}.method${i}`);
let t = performance.now();
for (const resource of names) {
  fg.declareRules({
    flow: [{ resource, threshold: 1000 }],
    circuitBreakers: [{ resource, strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 }],
  });
}
const declareMs = performance.now() - t;
t = performance.now();
for (const resource of names) {
  const entry = fg.tryEntry(resource);
  if (isBlockError(entry)) throw new Error(`${resource} should pass`);
  (entry as Entry).exit();
}
const firstUseMs = performance.now() - t;
if (fg.getRules().flow.length !== count) throw new Error(`expected ${count} flow rules in force`);
// Two rules per resource: report the cost per rule.
const rules = 2 * count;
console.log(
  JSON.stringify({
    count,
    rules,
    declareUsPerRule: (declareMs * 1000) / rules,
    firstUseUsPerRule: (firstUseMs * 1000) / rules,
  }),
);
