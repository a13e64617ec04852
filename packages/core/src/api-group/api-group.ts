import { compileLinearRegex, type LinearRegex } from '../kernel/linear-regex';
import { join, show, type RuleReader } from '../kernel/rule-reader';
import type { RuleKind } from '../kernel/rule-kind';
import { RoutePattern } from './route-pattern';

/**
 * A pattern of an API group: a route pattern (`'POST /cart/*'`, see `RoutePattern` in `@floodgate/core/http`), or a
 * regular expression over the request path (`{ method: 'GET', regex: '/api/v[0-9]+/orders' }`,
 * the linear-time subset, matching the whole path as the patterns read it: percent-escapes
 * decoded, runs of slashes merged, one trailing slash dropped; letter case as the framework
 * routes it).
 */
export type ApiGroupPattern = string | { readonly method?: string; readonly regex: string };

/**
 * A named group of request patterns that is one resource with one budget (Sentinel's gateway
 * `ApiDefinition`): the HTTP adapters enter the group's resource, `name`, once for every
 * request any of its patterns matches, besides the request's own route; rules on `name` limit
 * the group as a whole.
 *
 * @example
 * fg.loadRules({
 *   apiGroups: [{ name: 'checkout', patterns: ['POST /cart/*', 'POST /orders'] }],
 *   flow: [{ resource: 'checkout', threshold: 50 }],   // 50/s across both routes together
 * });
 */
export interface ApiGroupOptions {
  /** The group's resource name (`'checkout'`): rules limit the group under it. */
  readonly name: string;
  /** What requests belong to the group: at least one, at most 256. */
  readonly patterns: readonly ApiGroupPattern[];
}

/** An API group in force: every pattern validated; a regex pattern's `method` resolved (`'*'` for any). */
export interface ApiGroup {
  /** The group's resource. */
  readonly name: string;
  /** Its patterns: route patterns, and regexes with their method (`'*'` for any). */
  readonly patterns: readonly (string | { readonly method: string; readonly regex: string })[];
}

/** Bounds of an API group. */
export const API_GROUP_DEFAULTS = Object.freeze({
  /** Most patterns in one group. */
  maxPatterns: 256,
} as const);

const FIELDS = ['name', 'patterns'] as const;

/** Validates one API group: its name as a resource name, each pattern parsed (regexes for the linear-time engine). */
export function normalizeApiGroup(input: unknown, path: string, reader: RuleReader): ApiGroup | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const name = reader.resource(obj, 'name', path);
  const list = reader.array(obj.patterns, join(path, 'patterns'));
  if (obj.patterns !== undefined && Array.isArray(obj.patterns) && list.length === 0)
    reader.fail(join(path, 'patterns'), 'must list at least one pattern');
  if (list.length > API_GROUP_DEFAULTS.maxPatterns)
    reader.fail(
      join(path, 'patterns'),
      `must list at most ${API_GROUP_DEFAULTS.maxPatterns} patterns, got ${list.length}`,
    );
  const patterns = list.map((pattern, i) => readPattern(pattern, `${join(path, 'patterns')}[${i}]`, reader));
  return Object.freeze({ name, patterns: Object.freeze(patterns) });
}

function readPattern(value: unknown, path: string, reader: RuleReader): ApiGroup['patterns'][number] {
  if (typeof value === 'string') {
    const problem = RoutePattern.problem(value);
    if (problem !== undefined) reader.fail(path, `is not a valid route pattern: ${problem}`);
    return value;
  }
  const obj = reader.object(value, path);
  if (obj === undefined) return '*';
  reader.knownKeys(obj, ['method', 'regex'], path);
  let method = '*';
  if (obj.method !== undefined) {
    const problem = typeof obj.method === 'string' ? RoutePattern.problem(`${obj.method} /`) : 'is not a string';
    if (problem !== undefined || typeof obj.method !== 'string')
      reader.fail(join(path, 'method'), `must be an HTTP method or '*', got ${show(obj.method)}`);
    else method = obj.method.toUpperCase();
  }
  const regex = obj.regex;
  if (typeof regex !== 'string') reader.fail(join(path, 'regex'), `must be a string, got ${show(regex)}`);
  else {
    const compiled = compileLinearRegex(regex);
    if (typeof compiled === 'string') reader.fail(join(path, 'regex'), compiled);
  }
  return Object.freeze({ method, regex: typeof regex === 'string' ? regex : '' });
}

/**
 * The patterns of one group, compiled for matching requests: a request is in the group when
 * any pattern matches it; a `GET` pattern also takes `HEAD` requests (which the frameworks
 * answer with the GET handler).
 */
export class ApiGroupMatcher {
  /** The group's resource. */
  readonly name: string;
  private readonly routes: readonly RoutePattern[];
  private readonly regexes: readonly { readonly method: string; readonly source: string }[];
  private sensitive: LinearRegex[] | undefined;
  private insensitive: LinearRegex[] | undefined;

  constructor(group: ApiGroup) {
    this.name = group.name;
    this.routes = group.patterns.filter((p): p is string => typeof p === 'string').map((p) => new RoutePattern(p));
    this.regexes = group.patterns
      .filter((p): p is { method: string; regex: string } => typeof p !== 'string')
      .map((p) => ({ method: p.method, source: p.regex }));
  }

  /**
   * Whether a request is in the group: `method`, its path as {@link requestPath} reads it, and
   * that path in lower case (`folded`) when the framework routes letter case alike (else
   * `undefined`).
   */
  matches(method: string, path: string, folded: string | undefined): boolean {
    const routes = this.routes;
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i]!;
      if (route.matchPath(method, path, folded, false) !== undefined) return true;
      if (method === 'HEAD' && route.matchPath('GET', path, folded, false) !== undefined) return true;
    }
    const regexes = this.regexes;
    if (regexes.length === 0) return false;
    const compiled =
      folded === undefined ? (this.sensitive ??= this.compile(false)) : (this.insensitive ??= this.compile(true));
    for (let i = 0; i < regexes.length; i++) {
      const wanted = regexes[i]!.method;
      if (wanted !== '*' && wanted !== method && !(method === 'HEAD' && wanted === 'GET')) continue;
      if (compiled[i]!.test(path)) return true;
    }
    return false;
  }

  private compile(ignoreCase: boolean): LinearRegex[] {
    return this.regexes.map(({ source }) => compileLinearRegex(source, ignoreCase) as LinearRegex);
  }
}

/**
 * API groups as a kind of rule, so they are loaded, declared, validated, listed and reloaded
 * like every rule (`loadRules({ apiGroups })`, rule files, Redis, the dashboard). They check
 * nothing themselves: the HTTP layer reads them to enter each group's resource, where the rules
 * of the other kinds on `name` do the limiting. A loaded group replaces a declared one of the
 * same name.
 */
export const apiGroupKind: RuleKind<'apiGroups', ApiGroup, ApiGroupOptions> = {
  key: 'apiGroups',
  name: 'apiGroup',
  scope: 'resource',
  codes: {},
  normalize: normalizeApiGroup,
  resourceOf: (group) => group.name,
  compile: () => ({ checkers: [] }),
};
