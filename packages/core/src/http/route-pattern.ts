/** Path parameters captured by a {@link RoutePattern}, by name (`*` for the wildcard). */
export type RouteParams = Readonly<Record<string, string>>;

const enum SegmentKind {
  Literal,
  Param,
  Wildcard,
}

interface Segment {
  readonly kind: SegmentKind;
  /** The literal text, or the parameter's name (`*` for the wildcard). */
  readonly value: string;
}

const METHOD = /^[A-Za-z]+$/;
const PARAM_NAME = /^[A-Za-z_$][\w$]*$/;
const SLASH = 47;
const NO_PARAMS: RouteParams = Object.freeze({});

/**
 * A route pattern, parsed once and matched against many requests. Syntax:
 *
 * - `'GET /users/:id'`: a method and a path. The method is an HTTP method token
 *   (upper-cased) or `*` for any method; without a method (`'/health'`) any method matches.
 * - Path segments are literal (`users`, matched exactly, case-sensitively, on the raw path),
 *   `:name` (one non-empty segment, captured percent-decoded as `params.name`), or, as the last
 *   segment only, `*` (the rest of the path, possibly empty, captured as `params['*']`:
 *   `'/api/*'` matches `/api`, `/api/` and `/api/a/b`).
 * - `'*'` alone is every request: any method, any path. Use it for a global limit.
 * - The query string is ignored, and so is one trailing slash (`/users/1/` is `/users/1`).
 *
 * The pattern's {@link RoutePattern.resource} (its canonical form, `'GET /users/:id'`,
 * `'* /health'`, `'* /*'`) names the guarded resource, so one resource stands for every URL of
 * the route.
 *
 * @example
 * const route = new RoutePattern('GET /users/:id');
 * route.match('GET', '/users/42?full=1'); // { id: '42' }
 * route.match('POST', '/users/42');       // undefined
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
   * The path parameters when `method` and `url` (a request target: path and optional query)
   * match, else `undefined`. Allocates only when the pattern has parameters and `capture` is
   * true; with `capture` false, a match gives an empty object.
   */
  match(method: string, url: string, capture = true): RouteParams | undefined {
    if (this.method !== '*' && method !== this.method) return undefined;
    let end = url.indexOf('?');
    if (end < 0) end = url.length;
    if (end > 0 && url.charCodeAt(end - 1) === SLASH) end--;
    if (url.charCodeAt(0) !== SLASH && end > 0) return undefined;
    const segments = this.segments;
    let params: Record<string, string> | undefined;
    let pos = 0;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (segment.kind === SegmentKind.Wildcard) {
        if (!capture) return NO_PARAMS;
        (params ??= {})['*'] = pos >= end ? '' : decode(url.slice(pos + 1, end));
        return params;
      }
      if (pos >= end || url.charCodeAt(pos) !== SLASH) return undefined;
      const start = pos + 1;
      let next = url.indexOf('/', start);
      if (next < 0 || next > end) next = end;
      if (segment.kind === SegmentKind.Literal) {
        if (next - start !== segment.value.length || !url.startsWith(segment.value, start)) return undefined;
      } else {
        if (next === start) return undefined;
        if (capture) (params ??= {})[segment.value] = decode(url.slice(start, next));
      }
      pos = next;
    }
    if (pos !== end) return undefined;
    return params ?? NO_PARAMS;
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
  if (trimmed === '*') return { method: '*', segments: [{ kind: SegmentKind.Wildcard, value: '*' }] };
  const parts = trimmed.split(/\s+/);
  if (parts.length > 2) return "has more than a method and a path (expected '[METHOD] /path')";
  const method = parts.length === 2 ? parts[0]! : '*';
  const path = parts.length === 2 ? parts[1]! : parts[0]!;
  if (method !== '*' && !METHOD.test(method)) return `method ${JSON.stringify(method)} is not an HTTP method token or '*'`;
  if (!path.startsWith('/')) return `path ${JSON.stringify(path)} must start with '/'`;
  if (/[?#]/.test(path)) return "path must not contain '?' or '#' (the query string is never matched)";
  const raw = path.split('/').slice(1);
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const segments: Segment[] = [];
  const names = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const text = raw[i]!;
    if (text === '') return "path has an empty segment ('//')";
    if (text === '*') {
      if (i !== raw.length - 1) return "the wildcard '*' may only be the last segment";
      segments.push({ kind: SegmentKind.Wildcard, value: '*' });
    } else if (text.startsWith(':')) {
      const name = text.slice(1);
      if (!PARAM_NAME.test(name)) return `parameter ${JSON.stringify(text)} must be ':' followed by a name (letters, digits, _ or $)`;
      if (names.has(name)) return `parameter ':${name}' appears twice`;
      names.add(name);
      segments.push({ kind: SegmentKind.Param, value: name });
    } else if (text.includes(':') || text.includes('*')) {
      return `segment ${JSON.stringify(text)} mixes text with ':' or '*' (a parameter or wildcard must be a whole segment)`;
    } else {
      segments.push({ kind: SegmentKind.Literal, value: text });
    }
  }
  return { method: method === '*' ? '*' : method.toUpperCase(), segments };
}
