import type { Parameters } from 'fast-check';

/** The seed of `npm test`: fixed, so every run checks the same cases. */
const CI_SEED = 20261201;

/**
 * How property tests run: a fixed seed and `runs` cases (the default of `npm test`), or as the
 * environment says: `FLOODGATE_PROPERTY_RUNS=2000` for a longer run, `FLOODGATE_PROPERTY_SEED`
 * to replay a failure (fast-check prints the seed and the shrunk case when a property fails;
 * `FLOODGATE_PROPERTY_SEED=random` draws a new seed, printed on failure too).
 */
export function propertyRuns<T>(runs: number): Parameters<T> {
  const env = process.env;
  const numRuns = runsOf(runs);
  const seedText = env.FLOODGATE_PROPERTY_SEED;
  const seed = seedText === 'random' ? Date.now() ^ (Math.random() * 0x100000000) : (integer(seedText, 'FLOODGATE_PROPERTY_SEED') ?? CI_SEED);
  return { seed, numRuns, endOnFailure: true };
}

/**
 * A jest timeout for a property of `runs` cases by default: generous (a case takes a few ms,
 * more on a loaded machine), growing with `FLOODGATE_PROPERTY_RUNS`, so a long run is not cut
 * short by jest's 5 s default.
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
