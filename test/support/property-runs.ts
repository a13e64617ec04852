/**
 * How every property test (fast-check) of the repository runs, core, HTTP, NestJS or Redis
 * alike (issue #12): each `fc.assert` / `fc.check` takes its parameters from
 * {@link propertyRuns} and its `it(...)` a timeout from {@link propertyTimeoutMs}, so `npm test`
 * checks the same cases on every run, a failure prints the seed to replay, one environment
 * variable makes every property run longer, and no property depends on jest's 5 s default.
 */
import type { Parameters } from 'fast-check';

/** The seed of `npm test`: fixed, so every run checks the same cases. */
const CI_SEED = 20261201;

/**
 * How property tests run: a fixed seed and `runs` cases (the default of `npm test`), or as the
 * environment says: `FLOODGATE_PROPERTY_RUNS=2000` for a longer run of every property (it
 * replaces each test's own `runs`), `FLOODGATE_PROPERTY_SEED` to replay a failure
 * (`FLOODGATE_PROPERTY_SEED=random` draws a new seed). A property stops at its first failing
 * case (`endOnFailure`): fast-check prints the seed and that case as generated, not shrunk.
 * Spread the result to add parameters of a test's own: `{ ...propertyRuns(40), verbose: 2 }`.
 */
export function propertyRuns<T>(runs: number): Parameters<T> {
  const env = process.env;
  const numRuns = runsOf(runs);
  const seedText = env.FLOODGATE_PROPERTY_SEED;
  const seed =
    seedText === 'random'
      ? Date.now() ^ (Math.random() * 0x100000000)
      : (integer(seedText, 'FLOODGATE_PROPERTY_SEED') ?? CI_SEED);
  return { seed, numRuns, endOnFailure: true };
}

/**
 * A jest timeout for a property of `runs` cases by default: generous (a case takes a few ms in
 * core, tens of ms over HTTP or Redis, more on a loaded machine), growing with
 * `FLOODGATE_PROPERTY_RUNS`, so a long run is not cut short by jest's 5 s default. A test with
 * a larger timeout of its own keeps it: `Math.max(600_000, propertyTimeoutMs(runs))`.
 */
export function propertyTimeoutMs(runs: number): number {
  return 60_000 + 200 * runsOf(runs);
}

function runsOf(runs: number): number {
  return positiveInteger(process.env.FLOODGATE_PROPERTY_RUNS, 'FLOODGATE_PROPERTY_RUNS') ?? runs;
}

function positiveInteger(text: string | undefined, name: string): number | undefined {
  const value = integer(text, name);
  if (value !== undefined && value < 1) throw new RangeError(`${name} must be a positive integer, got ${text}`);
  return value;
}

function integer(text: string | undefined, name: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be an integer, got ${JSON.stringify(text)}`);
  return value;
}
