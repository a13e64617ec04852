import { MAX_HEADER_VALUE } from '@floodgate/core/http';

/** A header number: digits without a leading zero (a delta-seconds or structured-field integer). */
const HEADER_INTEGER = /^(0|[1-9]\d*)$/;

/** The grammar of each header with numbers a block or a passing response can carry (by lower-case name), each number a group. */
const HEADER_GRAMMARS: Readonly<Record<string, RegExp>> = {
  'retry-after': /^(\d+)$/,
  'ratelimit-limit': /^(\d+)$/,
  'ratelimit-remaining': /^(\d+)$/,
  'ratelimit-reset': /^(\d+)$/,
  'ratelimit-policy': /^(?:"(?:flow|hotspot|system)";q=(\d+);w=(\d+)|(\d+);w=(\d+))$/,
  ratelimit: /^(?:"(?:flow|hotspot|system)";r=(\d+);t=(\d+)|limit=(\d+), remaining=(\d+), reset=(\d+))$/,
};

/**
 * The `Retry-After` and RateLimit headers among `headers` (any letter case) that are not in their
 * draft's grammar with every number a whole number within [0, MAX_HEADER_VALUE] (#24), as
 * `name: value` lines; the numbers of the valid ones in `numbers`, when given.
 */
export function badHeaderNumbers(headers: Readonly<Record<string, unknown>>, numbers: string[] = []): string[] {
  const bad: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const grammar = HEADER_GRAMMARS[name.toLowerCase()];
    if (grammar === undefined) continue;
    const match = typeof value === 'string' ? grammar.exec(value) : null;
    const found = match?.slice(1).filter((n) => n !== undefined) ?? [];
    if (match === null || found.some((n) => !HEADER_INTEGER.test(n) || Number(n) > MAX_HEADER_VALUE))
      bad.push(`${name}: ${String(value)}`);
    else numbers.push(...found);
  }
  return bad;
}
