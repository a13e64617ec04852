import { METHODS } from 'node:http';

/** Path parameters captured by a {@link RoutePattern}, by name (`*` for the wildcard). */
export type RouteParams = Readonly<Record<string, string>>;

/**
 * How the framework's router reads a request path, where patterns must read it the same way.
 * Adapters set it from the framework's own settings; users do not.
 */
export interface PathMatching {
  /**
   * Whether letter case tells paths apart. Express: the app's `case sensitive routing`;
   * @koa/router: case-insensitive; Fastify: its `caseSensitive` router option.
   * @defaultValue false
   */
  readonly caseSensitive?: boolean;
  /** Whether `;` ends the path, as Fastify's `useSemicolonDelimiter` router option. @defaultValue false */
  readonly semicolonDelimiter?: boolean;
}

const enum SegmentKind {
  Literal,
  Param,
  Wildcard,
}

interface Segment {
  readonly kind: SegmentKind;
  /** The literal text (percent-escapes decoded as in request paths), or the parameter's name (`*` for the wildcard). */
  readonly value: string;
  /** The literal text in lower case, for case-insensitive matching. */
  readonly lower: string;
}

/** The methods Node's HTTP parser accepts: a pattern naming another can never match. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(METHODS);
const PARAM_NAME = /^[A-Za-z_$][\w$]*$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
const SLASH = 47;
const PERCENT = 37;
const NO_PARAMS: RouteParams = Object.freeze({});

/**
 * A route pattern, parsed once and matched against many requests. Syntax:
 *
 * - `'GET /users/:id'`: a method and a path. The method is one Node's HTTP parser knows
 *   (upper-cased) or `*` for any method; without a method (`'/health'`) any method matches.
 * - Path segments are literal (`users`), `:name` (one non-empty segment, captured
 *   percent-decoded as `params.name`), or, as the last segment only, `*` (the rest of the
 *   path, possibly empty, captured as `params['*']`: `'/api/*'` matches `/api`, `/api/` and
 *   `/api/a/b`).
 * - `'*'` alone is every request: any method, any path. Use it for a global limit.
 *
 * Requests are compared as the frameworks route them, or more widely (see
 * {@link requestPath}): the path of an absolute-form target (`http://host/login`), without
 * the query string or fragment, percent-escapes decoded (`/%6Cogin` is `/login`; `%2F` and
 * `%25` stay escaped), duplicate slashes merged, one trailing slash ignored; letter case per
 * {@link PathMatching.caseSensitive}.
 *
 * The pattern's {@link RoutePattern.resource} (its canonical form, `'GET /users/:id'`,
 * `'* /health'`, `'* /*'`) names the guarded resource, so one resource stands for every URL of
 * the route.
 *
 * @example
 * const route = new RoutePattern('GET /users/:id');
 * route.match('GET', '/users/42?full=1');   // { id: '42' }
 * route.match('GET', '/USERS/42');          // { id: '42' } (case-insensitive by default)
 * route.match('POST', '/users/42');         // undefined
 */
export class RoutePattern {
  /** The pattern as written. */
  readonly pattern: string;
  /** The method matched, upper-cased, or `*` for any. */
  readonly method: string;
  /** The canonical path: `/`-separated segments, no trailing slash. */
  readonly path: string;
  /** `${method} ${path}`: the resource name of the route. */
  readonly resource: string;
  /** The names of the path parameters, in order (`*` for the wildcard). */
  readonly paramNames: readonly string[];
  private readonly segments: readonly Segment[];

  /** @throws TypeError naming the pattern and what is wrong with it. */
  constructor(pattern: string) {
    const parsed = parse(pattern);
    if (typeof parsed === 'string') throw new TypeError(`Invalid route pattern ${JSON.stringify(pattern)}: ${parsed}`);
    this.pattern = pattern;
    this.method = parsed.method;
    this.segments = parsed.segments;
    this.path = `/${parsed.segments.map((s) => (s.kind === SegmentKind.Param ? `:${s.value}` : s.value)).join('/')}`;
    this.resource = `${this.method} ${this.path}`;
    this.paramNames = parsed.segments.filter((s) => s.kind !== SegmentKind.Literal).map((s) => s.value);
  }

  /** Why `pattern` does not parse, or `undefined` when it does. */
  static problem(pattern: unknown): string | undefined {
    if (typeof pattern !== 'string') return `must be a string, got ${typeof pattern}`;
    const parsed = parse(pattern);
    return typeof parsed === 'string' ? parsed : undefined;
  }

  /**
   * The path parameters when `method` and `url` (a request target) match, else `undefined`.
   * With `capture` false, a match gives an empty object.
   */
  match(method: string, url: string, capture = true, matching?: PathMatching): RouteParams | undefined {
    const path = requestPath(url, matching?.semicolonDelimiter === true);
    return this.matchPath(method, path, matching?.caseSensitive === true ? undefined : foldCase(path), capture);
  }

  /**
   * {@link RoutePattern.match} for a path already read by {@link requestPath}: literal segments
   * are compared with `folded` (the path in lower case, {@link foldCase}) when it is given,
   * else with `path`; parameters are captured from `path`. Allocates only when the pattern has
   * parameters and `capture` is true.
   */
  matchPath(method: string, path: string, folded: string | undefined, capture: boolean): RouteParams | undefined {
    if (this.method !== '*' && method !== this.method) return undefined;
    const text = folded ?? path;
    // Lower-casing may change a string's length (rare letters); then capture from the folded path.
    const source = folded === undefined || folded.length === path.length ? path : folded;
    const end = text.length;
    const segments = this.segments;
    // A target that is not a path (`*`) is matched only by a leading wildcard.
    if (end === 0 && segments[0]?.kind !== SegmentKind.Wildcard) return undefined;
    let params: Record<string, string> | undefined;
    let pos = 0;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (segment.kind === SegmentKind.Wildcard) {
        if (!capture) return NO_PARAMS;
        (params ??= {})['*'] = pos >= end ? '' : decode(source.slice(pos + 1));
        return params;
      }
      if (pos >= end || text.charCodeAt(pos) !== SLASH) return undefined;
      const start = pos + 1;
      let next = text.indexOf('/', start);
      if (next < 0) next = end;
      if (segment.kind === SegmentKind.Literal) {
        const literal = folded === undefined ? segment.value : segment.lower;
        if (next - start !== literal.length || !text.startsWith(literal, start)) return undefined;
      } else {
        if (next === start) return undefined;
        if (capture) (params ??= {})[segment.value] = decode(source.slice(start, next));
      }
      pos = next;
    }
    // `/` alone is the root: no segment left.
    if (pos !== end && !(pos === 0 && end === 1)) return undefined;
    return params ?? NO_PARAMS;
  }
}

/**
 * The path of a request target as patterns compare it: the widest reading any of the
 * frameworks' routers gives it, so that no spelling of a guarded path reaches the handler
 * unguarded. The path of an absolute-form target (`http://host/login` is `/login`), cut at `?`
 * and `#` (and `;` when `semicolon`), percent-escapes decoded once (`/%6Cogin` is `/login`;
 * `%2F` and `%25` stay escaped, so segments and parameters read as the routers read them;
 * malformed escapes stay as they are), runs of `/` merged into one, one trailing slash
 * dropped. A target that is not a path (`*`) gives `''`, which only `'*'` patterns match.
 * Cheap for plain paths: no allocation unless there is something to change.
 */
export function requestPath(url: string, semicolon = false): string {
  let start = 0;
  if (url.charCodeAt(0) !== SLASH) {
    const scheme = url.indexOf('://');
    if (scheme <= 0 || !SCHEME.test(url.slice(0, scheme))) return '';
    const slash = url.indexOf('/', scheme + 3);
    if (slash < 0) return '/';
    start = slash;
  }
  let end = url.length;
  let plain = true;
  for (let i = start; i < end; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 /* ? */ || c === 35 /* # */ || (semicolon && c === 59) /* ; */) {
      end = i;
      break;
    }
    if (c === PERCENT || (c === SLASH && url.charCodeAt(i - 1) === SLASH && i > start)) plain = false;
  }
  let path = plain ? (start === 0 && end === url.length ? url : url.slice(start, end)) : rewrite(url.slice(start, end));
  if (path.length > 1 && path.charCodeAt(path.length - 1) === SLASH) path = path.slice(0, -1);
  return path;
}

/**
 * `path` in lower case for case-insensitive matching (the same string when there is nothing
 * to lower). Letters beyond ASCII are lowered too, as Fastify's case-insensitive router does.
 */
export function foldCase(path: string): string {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return path.toLowerCase();
  }
  return path;
}

/** Decodes percent-escapes (but `%2F` and `%25`) and merges runs of `/`. */
function rewrite(path: string): string {
  let out = '';
  let i = 0;
  while (i < path.length) {
    const c = path.charCodeAt(i);
    if (c === SLASH) {
      if (out.charCodeAt(out.length - 1) !== SLASH) out += '/';
      i++;
    } else if (c === PERCENT) {
      // A run of escapes decodes together: a UTF-8 character spans several.
      let j = i;
      while (
        path.charCodeAt(j) === PERCENT &&
        isHex(path.charCodeAt(j + 1)) &&
        isHex(path.charCodeAt(j + 2)) &&
        !isKept(path, j)
      )
        j += 3;
      if (j === i) {
        out += isKept(path, i) ? path.slice(i, i + 3).toUpperCase() : '%';
        i += isKept(path, i) ? 3 : 1;
      } else {
        out += decodeRun(path.slice(i, j));
        i = j;
      }
    } else {
      out += path[i];
      i++;
    }
  }
  return out;
}

/** Whether the escape at `i` stays escaped: `%2F` (a slash inside a segment) and `%25` (a percent sign). */
function isKept(path: string, i: number): boolean {
  if (path.charCodeAt(i) !== PERCENT || path.charCodeAt(i + 1) !== 50 /* 2 */) return false;
  const c = path.charCodeAt(i + 2) | 0x20;
  return c === 102 /* f */ || c === 53; /* 5 */
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 102);
}

/** A run of escapes decoded; bytes that are not UTF-8 stay escaped, the rest decodes. */
function decodeRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    let out = '';
    for (let i = 0; i < run.length; i += 3) {
      const byte = parseInt(run.slice(i + 1, i + 3), 16);
      out += byte < 0x80 ? String.fromCharCode(byte) : run.slice(i, i + 3);
    }
    return out;
  }
}

function decode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function parse(pattern: string): { method: string; segments: Segment[] } | string {
  const trimmed = pattern.trim();
  if (trimmed === '') return "is empty (expected '[METHOD] /path' or '*')";
  if (trimmed === '*') return { method: '*', segments: [{ kind: SegmentKind.Wildcard, value: '*', lower: '*' }] };
  const parts = trimmed.split(/\s+/);
  if (parts.length > 2) return "has more than a method and a path (expected '[METHOD] /path')";
  const method = parts.length === 2 ? parts[0]!.toUpperCase() : '*';
  const path = parts.length === 2 ? parts[1]! : parts[0]!;
  if (method !== '*' && !KNOWN_METHODS.has(method)) {
    return `method ${JSON.stringify(parts[0])} is not an HTTP method (GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, ...) or '*': it would never match`;
  }
  if (!path.startsWith('/')) return `path ${JSON.stringify(path)} must start with '/'`;
  if (/[?#]/.test(path)) return "path must not contain '?' or '#' (the query string is never matched)";
  const raw = path.split('/').slice(1);
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const segments: Segment[] = [];
  const names = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const text = raw[i]!;
    if (text === '') return "path has an empty segment ('//')";
    if (/[{}()[\]]/.test(text)) {
      const name = /\{[:*]?([A-Za-z_$][\w$]*)\}/.exec(text)?.[1];
      return `segment ${JSON.stringify(text)} is not pattern syntax: write a parameter as ${name === undefined ? "':name'" : `':${name}'`} (a whole segment), the rest of the path as a last '*'; it would never match`;
    }
    if (text === '*') {
      if (i !== raw.length - 1) return "the wildcard '*' may only be the last segment";
      segments.push({ kind: SegmentKind.Wildcard, value: '*', lower: '*' });
    } else if (text.startsWith(':')) {
      const name = text.slice(1);
      if (!PARAM_NAME.test(name))
        return `parameter ${JSON.stringify(text)} must be ':' followed by a name (letters, digits, _ or $)`;
      if (names.has(name)) return `parameter ':${name}' appears twice`;
      names.add(name);
      segments.push({ kind: SegmentKind.Param, value: name, lower: name });
    } else if (text.includes(':') || text.includes('*')) {
      return `segment ${JSON.stringify(text)} mixes text with ':' or '*' (a parameter or wildcard must be a whole segment)`;
    } else {
      // A literal is read as request paths are, so `/caf%C3%A9` and `/café` are one route.
      const value = requestPath(`/${text}`).slice(1);
      segments.push({ kind: SegmentKind.Literal, value, lower: value.toLowerCase() });
    }
  }
  return { method, segments };
}
