import { compileLinearRegex, MAX_REGEX_LENGTH } from './linear-regex';
import { join, show, type RuleReader } from './rule-reader';

/**
 * Where a request's value comes from, as data (Sentinel's gateway `parseStrategy`, with route
 * parameters and the authenticated user besides): the client's address (`ip`), the `Host`
 * header (`host`), a request header, a query parameter, a cookie, a route parameter, or a
 * property of the authenticated user. The HTTP adapters read it; the engine only names it.
 */
export type KeySourceFrom = 'ip' | 'host' | 'header' | 'query' | 'cookie' | 'param' | 'user';

/** How a `KeyMatch` compares a value with its pattern (Sentinel's `matchStrategy`). */
export type KeyMatchStrategy = 'exact' | 'prefix' | 'contains' | 'regex';

/**
 * Which values a rule counts (Sentinel's `GatewayParamFlowItem.pattern` and `matchStrategy`):
 * a value that does not match is not limited by the rule. Comparisons are case-sensitive;
 * `regex` matches the whole value (as Java's `matches()`), in time linear in the value.
 */
export interface KeyMatch {
  /** `exact`: equal; `prefix`: starts with; `contains`: has it inside; `regex`: the whole value matches. */
  readonly strategy: KeyMatchStrategy;
  /**
   * The text compared (at most 1024 characters), or a pattern of the linear-time subset of
   * JavaScript regular expressions (at most 256 characters; no backreferences or lookaround).
   */
  readonly pattern: string;
}

/**
 * A hotspot rule's key source as users write it: `{ from: 'header', name: 'x-api-key' }`,
 * `{ from: 'ip' }`, `{ from: 'user', name: 'org.id', match: { strategy: 'prefix', pattern: 'acme-' } }`.
 */
export interface KeySourceOptions {
  /** Where the value comes from. */
  readonly from: KeySourceFrom;
  /**
   * The header (any letter case), query parameter, cookie or route parameter name; for `user`,
   * a property of the authenticated user or a dotted path into it (`'org.id'`). Not for `ip`
   * and `host`.
   */
  readonly name?: string;
  /**
   * `ip` only: the prefix length IPv6 clients are grouped by, or `false` for each address on
   * its own (see `ipAddressKey`). @defaultValue 56
   */
  readonly ipv6Subnet?: number | false;
  /** Counts only the values that match. @defaultValue every value */
  readonly match?: KeyMatch;
}

/** A key source in force: validated, header names in lower case, `ipv6Subnet` resolved for `ip`. */
export interface KeySource {
  /** Where the value comes from. */
  readonly from: KeySourceFrom;
  /** The header (in lower case), query parameter, cookie, route parameter or user property path. */
  readonly name?: string;
  /** `ip` only: the prefix length IPv6 clients are grouped by, or `false`. */
  readonly ipv6Subnet?: number | false;
  /** Which values are counted; every value when absent. */
  readonly match?: KeyMatch;
}

/** Defaults and bounds of key sources. */
export const KEY_SOURCE_DEFAULTS = Object.freeze({
  /** IPv6 clients grouped by their /56, as `ipKey()`. */
  ipv6Subnet: 56,
  /** Longest `name`. */
  maxNameLength: 256,
  /** Longest `match.pattern` of the `exact`, `prefix` and `contains` strategies. */
  maxPatternLength: 1024,
  /** Longest `match.pattern` of the `regex` strategy. */
  maxRegexLength: MAX_REGEX_LENGTH,
} as const);

/**
 * The value a request carries too many distinct values under (more than 32 of one header, query
 * parameter or cookie): all such requests are counted together under it, whatever the rule's
 * `match`, so sending many values never steps around a limit.
 */
export const MANY_VALUES = '\u0000many values';

const SOURCES: readonly KeySourceFrom[] = ['ip', 'host', 'header', 'query', 'cookie', 'param', 'user'];
const STRATEGIES: readonly KeyMatchStrategy[] = ['exact', 'prefix', 'contains', 'regex'];
const NAMED: ReadonlySet<KeySourceFrom> = new Set(['header', 'query', 'cookie', 'param', 'user']);
/** RFC 9110 token characters: what a header name is made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Validates a key source (the `key` of a hotspot rule) at `path`, every problem to `reader`;
 * a regex pattern is compiled for the linear-time engine, and refused when it cannot run there.
 */
export function normalizeKeySource(input: unknown, path: string, reader: RuleReader): KeySource | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, ['from', 'name', 'ipv6Subnet', 'match'], path);
  const from = reader.oneOf(obj, 'from', path, SOURCES);
  let name: string | undefined;
  if (NAMED.has(from)) {
    name = readName(obj.name, from, join(path, 'name'), reader);
  } else if (obj.name !== undefined) {
    reader.fail(join(path, 'name'), `is not read from '${from}': give it only for ${[...NAMED].join(', ')}`);
  }
  let ipv6Subnet: number | false | undefined;
  if (from === 'ip') {
    const subnet = obj.ipv6Subnet;
    if (subnet === undefined) ipv6Subnet = KEY_SOURCE_DEFAULTS.ipv6Subnet;
    else if (subnet === false || (Number.isInteger(subnet) && (subnet as number) >= 1 && (subnet as number) <= 128))
      ipv6Subnet = subnet as number | false;
    else reader.fail(join(path, 'ipv6Subnet'), `must be an integer within [1, 128] or false, got ${show(subnet)}`);
  } else if (obj.ipv6Subnet !== undefined) {
    reader.fail(join(path, 'ipv6Subnet'), "applies to from: 'ip' only");
  }
  const match = obj.match === undefined ? undefined : normalizeKeyMatch(obj.match, join(path, 'match'), reader);
  return Object.freeze({
    from,
    ...(name !== undefined ? { name } : {}),
    ...(ipv6Subnet !== undefined ? { ipv6Subnet } : {}),
    ...(match !== undefined ? { match } : {}),
  });
}

function readName(value: unknown, from: KeySourceFrom, path: string, reader: RuleReader): string | undefined {
  const what = from === 'user' ? "a property name or dotted path ('org.id')" : `a ${from} name`;
  if (typeof value !== 'string' || value.length === 0) {
    reader.fail(path, value === undefined ? `is required: ${what}` : `must be ${what}, got ${show(value)}`);
    return undefined;
  }
  if (value.length > KEY_SOURCE_DEFAULTS.maxNameLength) {
    reader.fail(path, `must be at most ${KEY_SOURCE_DEFAULTS.maxNameLength} characters, got ${value.length}`);
    return undefined;
  }
  if (from === 'header') {
    if (HEADER_NAME.test(value)) return value.toLowerCase();
    reader.fail(path, `must be a header name (letters, digits and !#$%&'*+.^_\`|~-), got ${show(value)}`);
    return undefined;
  }
  if (from === 'user' && value.split('.').some((part) => part.length === 0)) {
    reader.fail(path, `must be a property name or a dotted path ('org.id'), got ${show(value)}`);
    return undefined;
  }
  return value;
}

function normalizeKeyMatch(input: unknown, path: string, reader: RuleReader): KeyMatch | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, ['strategy', 'pattern'], path);
  const strategy = reader.oneOf(obj, 'strategy', path, STRATEGIES);
  const pattern = obj.pattern;
  if (typeof pattern !== 'string') {
    reader.fail(join(path, 'pattern'), `must be a string, got ${show(pattern)}`);
    return undefined;
  }
  if (strategy === 'regex') {
    const compiled = compileLinearRegex(pattern);
    if (typeof compiled === 'string') {
      reader.fail(join(path, 'pattern'), compiled);
      return undefined;
    }
  } else if (pattern.length > KEY_SOURCE_DEFAULTS.maxPatternLength) {
    reader.fail(
      join(path, 'pattern'),
      `must be at most ${KEY_SOURCE_DEFAULTS.maxPatternLength} characters, got ${pattern.length}`,
    );
    return undefined;
  }
  return Object.freeze({ strategy, pattern });
}

/**
 * The name a key source's value travels under in an entry's `keys` (one per source, whatever
 * the rules reading it): `'header:x-api-key'`, `'ip/56'`, `'user:org.id'`, `'host'`.
 */
export function keySourceId(source: KeySource): string {
  if (source.from === 'ip') return `ip/${source.ipv6Subnet === false ? 'all' : (source.ipv6Subnet ?? 56)}`;
  return source.name === undefined ? source.from : `${source.from}:${source.name}`;
}

/** Whether a value is counted by `match` (the values of {@link MANY_VALUES} always are). */
export function keyMatcher(match: KeyMatch): (value: string) => boolean {
  const { pattern } = match;
  switch (match.strategy) {
    case 'exact':
      return (value) => value === pattern || value === MANY_VALUES;
    case 'prefix':
      return (value) => value.startsWith(pattern) || value === MANY_VALUES;
    case 'contains':
      return (value) => value.includes(pattern) || value === MANY_VALUES;
    case 'regex': {
      const regex = compileLinearRegex(pattern);
      if (typeof regex === 'string') throw new TypeError(`key match pattern ${show(pattern)} ${regex}`);
      return (value) => value === MANY_VALUES || regex.test(value);
    }
  }
}
