import { keySourceId, MANY_VALUES, type KeySource } from '../kernel/key-source';
import type { RouteParams } from '../api-group/route-pattern';
import { ipAddressKey } from './ip-key';

/**
 * What an adapter tells the HTTP layer about its framework's requests, for hotspot rules whose
 * `key` reads them: the client's address (after the framework's trust-proxy setting), the query
 * string as the app reads it, and the authenticated user. Headers, the host and cookies are read
 * from Node's request itself, the same on every framework.
 */
export interface HttpRequestReader<Req> {
  /** The client's address (Express `req.ip`, Koa `ctx.ip`, Fastify `request.ip`). */
  readonly ip: (req: Req) => string | undefined;
  /** The parsed query string (Express `req.query`, Koa `ctx.query`, Fastify `request.query`). */
  readonly query: (req: Req) => unknown;
  /** The authenticated user (`req.user`, Koa `ctx.state.user`), or the adapter's `user` option's. */
  readonly user: (req: Req) => unknown;
}

/** What the HTTP layer reads of Node's request (`IncomingMessage`). */
export interface NodeRequestLike {
  /** Each header's values, one per line it came on, by lower-case name (Node's `headersDistinct`). */
  readonly headersDistinct?: Readonly<Record<string, readonly string[] | undefined>>;
}

/** The value of a request without one: such requests are counted together. */
const ABSENT = '';
/** Most distinct values of one source counted on their own (beyond it: {@link MANY_VALUES}). */
const MAX_VALUES = 32;
/** How deep a parsed query value (`?id[a][b]=x` with a nested parser) or a user property is read. */
const MAX_DEPTH = 8;

/**
 * The values of `sources` in one request, by {@link keySourceId}: each a string, or the array of
 * the distinct strings a source carries (a repeated header or query parameter, a nested query
 * object, several cookies of one name), each then counted; `''` when the request has none, so
 * leaving a value out shares one budget rather than escaping it; {@link MANY_VALUES} for more
 * than 32 distinct values. Values are read as the application reads them: header names in any
 * letter case, cookies and query parameters decoded.
 */
export function readRequestKeys<Req>(
  sources: readonly KeySource[],
  req: Req,
  node: NodeRequestLike | undefined,
  reader: HttpRequestReader<Req>,
  params: RouteParams | undefined,
): Record<string, unknown> {
  const keys: Record<string, unknown> = {};
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i]!;
    keys[keySourceId(source)] = readSource(source, req, node, reader, params);
  }
  return keys;
}

function readSource<Req>(
  source: KeySource,
  req: Req,
  node: NodeRequestLike | undefined,
  reader: HttpRequestReader<Req>,
  params: RouteParams | undefined,
): unknown {
  const name = source.name!;
  switch (source.from) {
    case 'ip':
      return ipAddressKey(reader.ip(req), { ipv6Subnet: source.ipv6Subnet ?? 56 });
    case 'host':
      return distinct((node?.headersDistinct?.host ?? []).map(hostOf));
    case 'header':
      return distinct(node?.headersDistinct?.[name] ?? []);
    case 'cookie':
      return distinct(cookiesNamed(node?.headersDistinct?.cookie ?? [], name));
    case 'query': {
      const query = reader.query(req);
      const found: string[] = [];
      if (typeof query === 'object' && query !== null && Object.hasOwn(query, name))
        collect((query as Record<string, unknown>)[name], found, 0);
      return distinct(found);
    }
    case 'param': {
      const value = params !== undefined && Object.hasOwn(params, name) ? params[name] : undefined;
      return typeof value === 'string' ? value : ABSENT;
    }
    case 'user': {
      let value: unknown = reader.user(req);
      for (const part of name.split('.')) {
        value =
          typeof value === 'object' && value !== null && Object.hasOwn(value, part)
            ? (value as Record<string, unknown>)[part]
            : undefined;
      }
      const found: string[] = [];
      collect(value, found, 0);
      return distinct(found);
    }
  }
}

/** One value, the array of the distinct ones, `''` for none, or {@link MANY_VALUES}. */
function distinct(values: readonly string[]): unknown {
  if (values.length === 0) return ABSENT;
  if (values.length === 1) return values[0];
  const set = new Set(values);
  if (set.size === 1) return values[0];
  return set.size > MAX_VALUES ? MANY_VALUES : [...set];
}

/** The primitive values in a parsed value (strings, numbers, booleans; arrays and objects searched). */
function collect(value: unknown, found: string[], depth: number): void {
  switch (typeof value) {
    case 'string':
      found.push(value);
      return;
    case 'number':
    case 'bigint':
    case 'boolean':
      found.push(String(value));
      return;
    case 'object':
      if (value === null || depth >= MAX_DEPTH || found.length > MAX_VALUES) return;
      for (const item of Array.isArray(value) ? value : Object.values(value)) collect(item, found, depth + 1);
  }
}

/** A `Host` header's host: lower case, without its port (an IPv6 literal keeps its brackets). */
function hostOf(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']');
    return end < 0 ? lower : lower.slice(0, end + 1);
  }
  const colon = lower.indexOf(':');
  return colon < 0 ? lower : lower.slice(0, colon);
}

/**
 * The values of the cookies named `name` in the `Cookie` header lines, decoded as the `cookie`
 * package decodes them (quotes dropped, percent-escapes decoded), so `sid=%61b` is `sid=ab`.
 */
function cookiesNamed(lines: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (const line of lines) {
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
      let value = pair.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (value.includes('%')) {
        try {
          value = decodeURIComponent(value);
        } catch {
          // A malformed escape stays as it is, as the cookie package leaves it.
        }
      }
      values.push(value);
    }
  }
  return values;
}
