import { ipAddressKey } from '@floodgate/core/http';
import type { HotParamSource } from './handler-rule-options';

/**
 * The value a request without one is counted as: no such query parameter or header, no
 * `req.user`, an empty value. Such requests share one bucket, so leaving the value out never
 * steps around a limit.
 */
export const ABSENT_VALUE = '';

/** How deep a parsed query value (`?id[a][b]=x` with a nested query parser) is searched. */
const MAX_DEPTH = 8;

/** What a request carries: the fields the readers look at, on Express and Fastify alike. */
interface RequestLike {
  readonly params?: Record<string, unknown>;
  readonly query?: Record<string, unknown>;
  readonly headers?: Record<string, unknown>;
  readonly user?: unknown;
  readonly ip?: unknown;
  /** Fastify: the Node request. */
  readonly raw?: { readonly headersDistinct?: Record<string, string[] | undefined> };
  /** Express (a Node request itself). */
  readonly headersDistinct?: Record<string, string[] | undefined>;
}

/**
 * The function that reads a `@HotParam` value from a request, in the form the engine counts:
 * one string (or number) or, where the request carries several values under the name (a
 * repeated query key or header, a nested query object), the array of every distinct one (each
 * is then counted, and one over its limit refuses the request). `label` names the decorator
 * and handler in errors.
 */
export function hotParamReader(source: HotParamSource, label: string): (request: RequestLike) => unknown {
  switch (source.kind) {
    case 'param': {
      const { name } = source;
      return (request) => {
        const params = request.params;
        if (params === undefined || !Object.hasOwn(params, name)) {
          const known = params === undefined ? 'none' : Object.keys(params).join(', ') || 'none';
          throw new TypeError(`${label}: the route has no parameter "${name}" (it has: ${known})`);
        }
        return countable(params[name]);
      };
    }
    case 'query': {
      const { name } = source;
      return (request) => {
        const query = request.query;
        return countable(query !== undefined && query !== null && Object.hasOwn(query, name) ? query[name] : undefined);
      };
    }
    case 'header': {
      const { name } = source;
      return (request) => {
        // headersDistinct keeps each occurrence of a repeated header apart ("a, a" would be a new value).
        const distinct = (request.raw ?? request).headersDistinct;
        return countable(distinct !== undefined ? distinct[name] : request.headers?.[name]);
      };
    }
    case 'user': {
      const path = source.name.split('.');
      return (request) => {
        const user = request.user;
        if (user === undefined || user === null) return ABSENT_VALUE;
        let value: unknown = user;
        for (const part of path)
          value = value === undefined || value === null ? undefined : (value as Record<string, unknown>)[part];
        if (value === undefined) {
          const keys = typeof user === 'object' ? Object.keys(user).join(', ') || 'none' : typeof user;
          throw new TypeError(`${label}: req.user has no "${source.name}" (it has: ${keys})`);
        }
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          throw new TypeError(`${label}: req.user.${source.name} is an object; name a string or number property`);
        }
        return countable(value);
      };
    }
    case 'ip':
      return (request) => ipKey(request.ip);
    case 'function': {
      const { read } = source;
      return (request) => countable(read(request));
    }
  }
}

/**
 * A request value in the form the engine counts: strings, numbers, bigints and booleans as
 * they are (`''`, `null` and `undefined` as {@link ABSENT_VALUE}); arrays and objects as the
 * distinct primitive values found in them, so `?id=a&id=b` counts `a` and `b` and a nested
 * `?id[x]=a` counts `a`.
 */
export function countable(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return ABSENT_VALUE;
      const found = new Set<unknown>();
      collect(value, found, 0);
      if (found.size === 0) return ABSENT_VALUE;
      if (found.size === 1) return found.values().next().value;
      return [...found];
    }
    default:
      return ABSENT_VALUE;
  }
}

function collect(value: object, found: Set<unknown>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    if (typeof item === 'object' && item !== null) collect(item as object, found, depth + 1);
    else if (
      typeof item === 'string' ||
      typeof item === 'number' ||
      typeof item === 'bigint' ||
      typeof item === 'boolean'
    )
      found.add(item);
    else found.add(ABSENT_VALUE);
  }
}

/** IPv6 clients are counted per /64 network. */
const IPV6_PER_64 = Object.freeze({ ipv6Subnet: 64 });

/**
 * The key a client address is counted under: `ipAddressKey()` of `@floodgate/core/http` with
 * IPv6 addresses by their /64 network (`2001:db8:0:1::/64`, since one client usually holds a
 * whole /64 and could otherwise rotate addresses in it); IPv4 in plain dotted decimal, also when
 * it arrives inside an IPv6 address (IPv4-mapped `::ffff:10.0.0.1`, IPv4-compatible,
 * IPv4-translated, NAT64 `64:ff9b::10.0.0.1`).
 */
export function ipKey(ip: unknown): string {
  if (typeof ip !== 'string' || ip === '') return ABSENT_VALUE;
  return ipAddressKey(ip, IPV6_PER_64);
}
