/**
 * One process of the instruction count: sets up one engine with the core suite's rules
 * (`engineRules`) on a clock that steps a fixed amount per read, checks that each Floodgate case
 * passes or is refused as its label says, warms every Floodgate case (so call sites are as
 * polymorphic as in the core suite), then runs one case `calls` times and exits. Run under
 * callgrind by instruction-suite.ts, twice with different `calls`: the difference is what the
 * calls cost.
 *
 * Usage: node --single-threaded --predictable --hash-seed=1 --random-seed=1
 *          bench/dist/instructions/instruction-cases.js <case> <calls> [coreIndex]
 * (`coreIndex`: the `index.js` of another build of `@floodgate/core`, for an A/B).
 */
import { ConsecutiveBreaker, circuitBreaker, handleAll } from 'cockatiel';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { expectBlock, expectPass, expectWouldBlock } from '../core/case-checks';
import { engineRules } from '../core/core-cases';
import { loadCoreCopy, type CoreModule } from '../core/core-copy';
import { probeRuleKinds } from '../core/probe-rule-kinds';
import { steppingClock } from './stepping-clock';

/** One case: what a call is, and whether it returns a promise the loop awaits. */
interface InstructionCase {
  readonly label: string;
  readonly async: boolean;
  readonly call: () => unknown;
}

const NEVER = 1e9;
const HOUR_MS = 3_600_000;
/** Warm-up calls of every case, then of the measured one before its counted calls. */
const WARM_CALLS = 20_000;
const SETTLE_CALLS = 100_000;

/** The case ids, in report order, with their labels (the runner lists them without an engine). */
export const INSTRUCTION_CASES: Readonly<Record<string, string>> = Object.freeze({
  'baseline.await': 'await a resolved promise',
  'fg.sync.none': 'entry() + exit(), no rule',
  'fg.sync.qps': 'entry() + exit(), one QPS rule',
  'fg.sync.three': 'entry() + exit(), QPS + breaker + hotspot',
  'fg.sync.qpsInbound': 'entry() + exit(), inbound, one QPS rule',
  'fg.sync.qpsInboundCopy': 'entry() + exit(), inbound, one QPS rule, a copy of the core',
  'fg.sync.qpsInboundNoSystemKind': 'entry() + exit(), inbound, one QPS rule, a copy with the system kind compiled out',
  'fg.sync.qpsShadow': 'entry() + exit(), one QPS rule in shadow (not reached)',
  'fg.sync.qpsShadowHit':
    'entry() + exit(), one QPS rule in shadow that would refuse every call (wouldBlock, no listener)',
  'fg.block.tryEntry': 'blocked tryEntry(), QPS rule (returned)',
  'fg.block.circuit': 'tryEntry() on an open circuit',
  'fg.block.hot': 'blocked tryEntry(), hotspot rule',
  'fg.async.qps': 'await run(), one QPS rule',
  'fg.async.three': 'await run(), QPS + breaker + hotspot',
  'fg.async.qpsAsyncFn': 'await run() of an async function, one QPS rule',
  'fg.async.decorated': 'await a @RateLimit async method, one QPS rule',
  'fg.async.qpsTimeout': 'await run() of an async function with timeoutMs, one QPS rule',
  'cockatiel.pass': 'cockatiel circuitBreaker execute()',
  'rlf.pass': 'RateLimiterMemory consume(), pass',
});

/**
 * An inbound call with one QPS rule on its own engine of a fresh copy of the core (see
 * core-copy.ts), made at the first call: a copy shares no call site with the engine of the other
 * cases, so it is loaded (and warmed) only in the processes that count it.
 */
function inboundOnCopy(withoutSystemKind: boolean): () => unknown {
  let call: (() => unknown) | undefined;
  return () => {
    if (call === undefined) {
      const copy = loadCoreCopy(withoutSystemKind);
      const own = new copy.Floodgate({ clock: steppingClock() });
      own.loadRules({ flow: [{ resource: 'r.qps', threshold: NEVER }] });
      const inbound = Object.freeze({ inbound: true });
      call = () => own.entry('r.qps', inbound).exit();
    }
    return call();
  };
}

/** Cases on a copy of the core, warmed only when counted (see inboundOnCopy). */
export const ON_COPIES: ReadonlySet<string> = new Set(['fg.sync.qpsInboundCopy', 'fg.sync.qpsInboundNoSystemKind']);

/**
 * Floodgate cases warmed only when counted: run()'s options of one more shape (`{ timeoutMs }`)
 * make its option reads megamorphic, which adds about 630 instructions to every other async case
 * (`fg.async.qpsAsyncFn` 3,396 against 2,766), so warmed with the rest it would change their counts.
 */
const WARMED_ALONE: ReadonlySet<string> = new Set([...ON_COPIES, 'fg.async.qpsTimeout']);

/** The cases on one engine, and a check that each Floodgate case is the call its label names. */
export interface InstructionCases {
  readonly cases: Readonly<Record<string, InstructionCase>>;
  /**
   * Asks the engine once, outside the cases, that each passes, is refused or would be refused as
   * its label says (a rule that no longer refuses would make a "blocked" count a pass's); throws
   * naming the case that is not.
   */
  verify(): Promise<void>;
}

/** The cases on an engine of `core` (this build's `@floodgate/core`, or another's for an A/B). */
export function instructionCases(core: CoreModule): InstructionCases {
  const { Floodgate, RateLimit } = core;
  const fg = new Floodgate({ clock: steppingClock() });
  fg.loadRules(engineRules(probeRuleKinds()));
  class Service {
    @RateLimit({ floodgate: fg, resource: 'r.decorated', threshold: NEVER })
    async one(): Promise<number> {
      return 1;
    }
  }
  const service = new Service();
  const oneAsync = async (): Promise<number> => 1;
  const trip = fg.entry('r.open');
  trip.traceError(new Error('trip'));
  trip.exit();
  const inbound = Object.freeze({ inbound: true });
  const user = Object.freeze({ args: ['user-1'] });
  const timeout = Object.freeze({ timeoutMs: 1000 });
  const one = (): number => 1;
  const resolved = Promise.resolve(1);
  const policy = circuitBreaker(handleAll, { halfOpenAfter: HOUR_MS, breaker: new ConsecutiveBreaker(5) });
  const limiter = new RateLimiterMemory({ points: NEVER, duration: 1 });
  const sync = (id: string, call: () => unknown): [string, InstructionCase] => [
    id,
    { label: INSTRUCTION_CASES[id]!, async: false, call },
  ];
  const async = (id: string, call: () => unknown): [string, InstructionCase] => [
    id,
    { label: INSTRUCTION_CASES[id]!, async: true, call },
  ];
  const answers = async (call: () => unknown): Promise<void> => {
    const value: unknown = await call();
    if (value !== 1) throw new Error(`should answer 1, got ${String(value)}`);
  };
  const checks: ReadonlyArray<readonly [string, () => unknown]> = [
    ['fg.sync.none', () => expectPass(fg, 'r.none')],
    ['fg.sync.qps', () => expectPass(fg, 'r.qps')],
    ['fg.sync.three', () => expectPass(fg, 'r.three', user)],
    ['fg.sync.qpsInbound', () => expectPass(fg, 'r.qps', inbound)],
    ['fg.sync.qpsShadow', () => expectPass(fg, 'r.qps.shadow')],
    ['fg.sync.qpsShadowHit', () => expectWouldBlock(fg, 'r.qps.shadowHit', 'ERR_FLOW_BLOCKED')],
    ['fg.block.tryEntry', () => expectBlock(fg, 'r.blocked', 'ERR_FLOW_BLOCKED')],
    ['fg.block.circuit', () => expectBlock(fg, 'r.open', 'ERR_CIRCUIT_OPEN')],
    ['fg.block.hot', () => expectBlock(fg, 'r.hot.blocked', 'ERR_HOT_PARAM_BLOCKED', user)],
    ['fg.async.qps', () => answers(() => fg.run('r.qps', one))],
    ['fg.async.three', () => answers(() => fg.run('r.three', one, user))],
    ['fg.async.qpsAsyncFn', () => answers(() => fg.run('r.qps', oneAsync))],
    ['fg.async.decorated', () => answers(() => service.one())],
    ['fg.async.qpsTimeout', () => answers(() => fg.run('r.qps', oneAsync, timeout))],
  ];
  const verify = async (): Promise<void> => {
    for (const [id, check] of checks) {
      try {
        await check();
      } catch (error) {
        throw new Error(`${id}: ${(error as Error).message}`, { cause: error });
      }
    }
  };
  const cases = Object.fromEntries([
    async('baseline.await', async () => await resolved),
    sync('fg.sync.none', () => fg.entry('r.none').exit()),
    sync('fg.sync.qps', () => fg.entry('r.qps').exit()),
    sync('fg.sync.three', () => fg.entry('r.three', user).exit()),
    sync('fg.sync.qpsInbound', () => fg.entry('r.qps', inbound).exit()),
    sync('fg.sync.qpsInboundCopy', inboundOnCopy(false)),
    sync('fg.sync.qpsInboundNoSystemKind', inboundOnCopy(true)),
    sync('fg.sync.qpsShadow', () => fg.entry('r.qps.shadow').exit()),
    sync('fg.sync.qpsShadowHit', () => fg.entry('r.qps.shadowHit').exit()),
    sync('fg.block.tryEntry', () => fg.tryEntry('r.blocked')),
    sync('fg.block.circuit', () => fg.tryEntry('r.open')),
    sync('fg.block.hot', () => fg.tryEntry('r.hot.blocked', user)),
    async('fg.async.qps', () => fg.run('r.qps', one)),
    async('fg.async.three', () => fg.run('r.three', one, user)),
    async('fg.async.qpsAsyncFn', () => fg.run('r.qps', oneAsync)),
    async('fg.async.decorated', () => service.one()),
    async('fg.async.qpsTimeout', () => fg.run('r.qps', oneAsync, timeout)),
    async('cockatiel.pass', () => policy.execute(one)),
    async('rlf.pass', () => limiter.consume('user-1')),
  ]);
  return { cases, verify };
}

async function repeat(c: InstructionCase, calls: number): Promise<void> {
  if (c.async) for (let i = 0; i < calls; i++) await c.call();
  else for (let i = 0; i < calls; i++) c.call();
}

async function main(): Promise<void> {
  const [id, calls, coreIndex] = process.argv.slice(2);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const core = require(coreIndex ?? '@floodgate/core') as CoreModule;
  const { cases: all, verify } = instructionCases(core);
  await verify();
  const chosen = id === undefined ? undefined : all[id];
  if (chosen === undefined) throw new Error(`unknown case ${String(id)}; known: ${Object.keys(all).join(', ')}`);
  // Floodgate's cases warm each other; a peer's case (whose library reads real time: its timers
  // fire by wall clock, slowed by valgrind) and those WARMED_ALONE are run only when they are
  // the one counted.
  for (const [caseId, c] of Object.entries(all))
    if ((caseId.startsWith('fg.') && !WARMED_ALONE.has(caseId)) || caseId === id) await repeat(c, WARM_CALLS);
  await repeat(chosen, SETTLE_CALLS);
  await repeat(chosen, Number(calls));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
