import { floodgate as defaultFloodgate, type Floodgate } from '../engine/floodgate';
import { normalizeRuleSet } from '../engine/rule-set-input';
import { RULE_KIND_NAMES, type RuleKindKey as RuleKind } from '../engine/kinds';
import { RuleValidationError, type BlockError } from '../kernel/errors';
import { join as at, MAX_DURATION_MS, RuleReader, show } from '../kernel/rule-reader';
import { HTTP_DEFAULTS, type HttpParamReader } from './http-options';
import type { RateLimitHeadersDraft } from './rate-limit-headers';
import { readPriorityOption, type RequestPriority } from './request-priority';
import { normalizeApiGroup, type ApiGroup } from '../api-group/api-group';
import { RoutePattern } from '../api-group/route-pattern';

/** The option names every HTTP adapter factory takes ({@link HttpOptions}). */
export const HTTP_OPTION_KEYS = Object.freeze([
  'floodgate',
  'origin',
  'priority',
  'onBlock',
  'fallback',
  'headers',
  'isFailure',
  'user',
  'wouldBlockHeader',
] as const);

/** The RateLimit headers option, resolved. */
export interface NormalizedHeaders {
  /** The form of the headers, or `false` for none. */
  readonly draft: RateLimitHeadersDraft | false;
  /** Whether passing responses carry them too. */
  readonly onPass: boolean;
}

/** {@link HttpOptions} validated, with every default resolved. */
export interface NormalizedHttpOptions<Req, F> {
  readonly engine: Floodgate;
  readonly origin: ((req: Req) => string) | undefined;
  readonly priority: RequestPriority<Req>;
  readonly onBlock: ((error: BlockError, req: Req) => void) | undefined;
  readonly fallback: F | undefined;
  readonly headers: NormalizedHeaders;
  readonly isFailure: (status: number, error: unknown) => boolean;
  readonly user: ((req: Req) => unknown) | undefined;
  /** The header that names the kind of a rule that let the request through instead of refusing it; `undefined` for none. */
  readonly wouldBlockHeader: string | undefined;
}

/** A hotspot rule of a route, with how its value is read. */
export interface RouteHotParam<Req> {
  /** The rule's fields, without `resource`, `param`, `paramIndex` and `paramKey` (with `key`, when it names the value). */
  readonly rule: Readonly<Record<string, unknown>>;
  /** A path parameter's name, or a function of the request; `undefined` when the rule's `key` names the value. */
  readonly param: string | HttpParamReader<Req> | undefined;
}

/** A route's rules, fallback and timeout, validated; rules are in the users' form, without `resource`. */
export interface RouteRules<Req, F> {
  readonly flow: readonly Readonly<Record<string, unknown>>[];
  readonly circuitBreakers: readonly Readonly<Record<string, unknown>>[];
  readonly hotParams: readonly RouteHotParam<Req>[];
  readonly fallback: F | undefined;
  readonly timeoutMs: number | undefined;
}

/** The rule kinds of a route, by option name. */
export type RouteRuleOption = 'rateLimit' | 'circuitBreaker' | 'hotParam';

/** {@link ResilienceOptions} validated: the common options and the parsed routes, in order. */
export interface NormalizedResilienceOptions<Req, F> {
  readonly http: NormalizedHttpOptions<Req, F>;
  readonly routes: readonly { readonly pattern: RoutePattern; readonly rules: RouteRules<Req, F> }[];
  readonly everyRoute: boolean;
  /** The API groups declared in code, with the rules on each group's resource. */
  readonly groups: readonly { readonly group: ApiGroup; readonly rules: RouteRules<Req, F> }[];
}

/** A per-route factory's options validated: the common options, its route's rules, and its resource name if given. */
export interface NormalizedRouteFactoryOptions<Req, F> {
  readonly http: NormalizedHttpOptions<Req, F>;
  readonly rules: RouteRules<Req, F>;
  readonly resource: string | undefined;
}

/** The kinds routes take, each by its route option (`rateLimit` → `flow`), as the kinds name themselves. */
const KIND_OF: ReadonlyMap<RouteRuleOption, RouteKind> = new Map(
  RULE_KIND_NAMES.flatMap(({ key, routeOption }) =>
    routeOption === undefined ? [] : [[routeOption as RouteRuleOption, key as RouteKind] as const],
  ),
);
/** The route options that take rules, in the kinds' check order. */
const RULE_OPTIONS: readonly RouteRuleOption[] = [...KIND_OF.keys()];

const DRAFTS: readonly RateLimitHeadersDraft[] = ['draft-6', 'draft-7', 'draft-8'];
const HEADERS_KEYS = ['draft', 'onPass'] as const;
const ROUTE_KEYS: readonly string[] = [...RULE_OPTIONS, 'fallback', 'timeoutMs'];
const RESILIENCE_KEYS = [...HTTP_OPTION_KEYS, 'routes', 'everyRoute', 'groups'] as const;
const GROUP_KEYS = ['name', 'patterns'] as const;
const FACTORY_KEYS: readonly string[] = [...HTTP_OPTION_KEYS, 'resource', 'timeoutMs'];
const TIMEOUT = { above: 0, max: MAX_DURATION_MS } as const;
/** The resource named in validation messages of a per-route factory (the route is not known yet). */
const SOME_ROUTE = 'GET /route';

/**
 * The default `isFailure`: a status >= 500, or a thrown error that is not an HTTP client error
 * (`status` / `statusCode` within [400, 499], as http-errors, Koa's `ctx.throw` and Fastify
 * set).
 */
export function defaultIsFailure(status: number, error: unknown): boolean {
  if (status >= HTTP_DEFAULTS.failureStatus) return true;
  if (error === undefined) return false;
  const e = error as { readonly status?: unknown; readonly statusCode?: unknown };
  const code = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  return !(code !== undefined && code >= 400 && code < 500);
}

/**
 * Reads the common HTTP options from `obj` (unknown keys are the caller's to check), recording
 * problems in `reader`.
 */
export function readHttpOptions<Req, F>(
  obj: Record<string, unknown>,
  path: string,
  reader: RuleReader,
): NormalizedHttpOptions<Req, F> {
  const engine = obj.floodgate;
  if (engine !== undefined && !isEngine(engine))
    reader.fail(at(path, 'floodgate'), `must be a Floodgate engine, got ${show(engine)}`);
  return {
    engine: isEngine(engine) ? engine : defaultFloodgate,
    origin: readFunction(obj, 'origin', path, reader) as NormalizedHttpOptions<Req, F>['origin'],
    priority: readPriorityOption<Req>(obj, path, reader),
    onBlock: readFunction(obj, 'onBlock', path, reader) as NormalizedHttpOptions<Req, F>['onBlock'],
    fallback: readFunction(obj, 'fallback', path, reader) as F | undefined,
    headers: readHeaders(obj.headers, at(path, 'headers'), reader),
    isFailure:
      (readFunction(obj, 'isFailure', path, reader) as NormalizedHttpOptions<Req, F>['isFailure'] | undefined) ??
      defaultIsFailure,
    user: readFunction(obj, 'user', path, reader) as NormalizedHttpOptions<Req, F>['user'],
    wouldBlockHeader: readWouldBlockHeader(obj.wouldBlockHeader, at(path, 'wouldBlockHeader'), reader),
  };
}

/** An HTTP header name (RFC 9110 `token`). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function readWouldBlockHeader(value: unknown, path: string, reader: RuleReader): string | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return HTTP_DEFAULTS.wouldBlockHeader;
  if (typeof value === 'string' && HEADER_NAME.test(value)) return value;
  reader.fail(path, `must be true, false or a header name, got ${show(value)}`);
  return undefined;
}

function readHeaders(value: unknown, path: string, reader: RuleReader): NormalizedHeaders {
  const fallback = { draft: HTTP_DEFAULTS.headers, onPass: HTTP_DEFAULTS.headersOnPass };
  if (value === undefined) return fallback;
  if (value === false || DRAFTS.includes(value as RateLimitHeadersDraft))
    return { draft: value as RateLimitHeadersDraft | false, onPass: false };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    reader.fail(path, `must be one of 'draft-6', 'draft-7', 'draft-8', false or { draft, onPass }, got ${show(value)}`);
    return fallback;
  }
  const obj = value as Record<string, unknown>;
  reader.knownKeys(obj, HEADERS_KEYS, path);
  let draft: RateLimitHeadersDraft | false = HTTP_DEFAULTS.headers;
  if (obj.draft !== undefined) {
    if (obj.draft === false || DRAFTS.includes(obj.draft as RateLimitHeadersDraft))
      draft = obj.draft as RateLimitHeadersDraft | false;
    else
      reader.fail(at(path, 'draft'), `must be one of 'draft-6', 'draft-7', 'draft-8' or false, got ${show(obj.draft)}`);
  }
  const onPass = reader.boolean(obj, 'onPass', path, HTTP_DEFAULTS.headersOnPass);
  if (onPass && draft === false)
    reader.fail(at(path, 'onPass'), 'asks for headers on passing responses, but draft is false (no headers)');
  return { draft, onPass };
}

/** An optional function option; a problem is recorded when it is given and not a function. */
export function readFunction(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  reader: RuleReader,
): ((...args: never[]) => unknown) | undefined {
  const value = obj[key];
  if (value === undefined || typeof value === 'function') return value as ((...args: never[]) => unknown) | undefined;
  reader.fail(at(path, key), `must be a function, got ${show(value)}`);
  return undefined;
}

function isEngine(value: unknown): value is Floodgate {
  const engine = value as Partial<Floodgate> | null;
  return (
    typeof engine === 'object' &&
    engine !== null &&
    typeof engine.tryEntry === 'function' &&
    typeof engine.enter === 'function' &&
    typeof engine.declareRules === 'function' &&
    typeof engine.getRules === 'function' &&
    typeof engine.resourceInfo === 'function'
  );
}

/**
 * Validates the options of `resilience()` or of the Fastify plugin: the common options, each
 * route pattern (parsed once), each route's rules.
 * @throws RuleValidationError naming every bad option, pattern and rule field.
 */
export function normalizeResilienceOptions<Req, F>(input: unknown, name: string): NormalizedResilienceOptions<Req, F> {
  const reader = new RuleReader();
  const obj = input === undefined ? {} : (reader.object(input, 'options') ?? {});
  reader.knownKeys(obj, RESILIENCE_KEYS, '');
  const http = readHttpOptions<Req, F>(obj, '', reader);
  const routes: { pattern: RoutePattern; rules: RouteRules<Req, F> }[] = [];
  if (obj.routes !== undefined) {
    const table = reader.object(obj.routes, 'routes') ?? {};
    const seen = new Map<string, string>();
    for (const [key, value] of Object.entries(table)) {
      const path = `routes['${key}']`;
      const problem = RoutePattern.problem(key);
      if (problem !== undefined) {
        reader.fail(path, `is not a valid route pattern: ${problem}`);
        continue;
      }
      const pattern = new RoutePattern(key);
      const twin = seen.get(pattern.resource);
      if (twin !== undefined) reader.fail(path, `is the same route as routes['${twin}'] (${pattern.resource})`);
      seen.set(pattern.resource, key);
      routes.push({
        pattern,
        rules: readRouteOptions<Req, F>(value, path, reader, pattern.resource, pattern.paramNames),
      });
    }
  }
  const everyRoute = reader.boolean(obj, 'everyRoute', '', false);
  const groups: { group: ApiGroup; rules: RouteRules<Req, F> }[] = [];
  if (obj.groups !== undefined) {
    const seen = new Set<string>();
    reader.array(obj.groups, 'groups').forEach((item, i) => {
      const path = `groups[${i}]`;
      const fields = reader.object(item, path);
      if (fields === undefined) return;
      const own: Record<string, unknown> = {};
      const route: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(fields))
        ((GROUP_KEYS as readonly string[]).includes(key) ? own : route)[key] = value;
      const group = normalizeApiGroup(own, path, reader);
      if (group === undefined) return;
      if (seen.has(group.name)) reader.fail(`${path}.name`, `names the group ${show(group.name)} twice`);
      seen.add(group.name);
      groups.push({ group, rules: readRouteOptions<Req, F>(route, path, reader, group.name, []) });
    });
  }
  reader.throwIfAny(`Invalid ${name} options`);
  return { http, routes, everyRoute, groups };
}

/**
 * Validates one route's options (`routes[pattern]`, Fastify's `config.floodgate`); `paramNames`,
 * when known, are the route's path parameters, which a hotspot `param` must name.
 * @throws RuleValidationError naming every bad field.
 */
export function normalizeRouteOptions<Req, F>(
  input: unknown,
  path: string,
  resource: string,
  context: string,
  paramNames?: readonly string[],
): RouteRules<Req, F> {
  const reader = new RuleReader();
  const rules = readRouteOptions<Req, F>(input, path, reader, resource, paramNames);
  reader.throwIfAny(context);
  return rules;
}

/**
 * Validates the flat options of a per-route factory (`rateLimit({ threshold, fallback })`):
 * common options, `resource`, `timeoutMs`, and the fields of one rule of `option`'s kind.
 * @throws RuleValidationError naming every bad field.
 */
export function normalizeRouteFactoryOptions<Req, F>(
  option: RouteRuleOption,
  input: unknown,
  name: string,
): NormalizedRouteFactoryOptions<Req, F> {
  const reader = new RuleReader();
  const obj = reader.object(input, 'options') ?? {};
  const http = readHttpOptions<Req, F>(obj, '', reader);
  const resource = reader.string(obj, 'resource', '', undefined);
  const timeoutMs = reader.number(obj, 'timeoutMs', '', TIMEOUT, undefined);
  const rule: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) if (!FACTORY_KEYS.includes(key)) rule[key] = value;
  const lists: RuleLists = { flow: [], circuitBreakers: [], hotParams: [] };
  const read = readRuleOf<Req>(option, rule, '', reader, resource ?? SOME_ROUTE, undefined);
  if (read !== undefined) lists[KIND_OF.get(option)!].push(read);
  reader.throwIfAny(`Invalid ${name} options`);
  return { http, rules: toRouteRules<Req, F>(lists, http.fallback, timeoutMs), resource };
}

/**
 * Why a route's string-valued hotspot params cannot be read on a route whose path parameters
 * are `paramNames`: one issue per param the route does not have (the rule would limit nothing).
 */
export function missingParams(
  rules: RouteRules<unknown, unknown>,
  paramNames: readonly string[],
  path: string,
): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  for (const { param } of rules.hotParams) {
    if (typeof param === 'string' && !paramNames.includes(param))
      issues.push({ path: at(path, 'param'), message: notAParam(param, paramNames) });
  }
  return issues;
}

function notAParam(param: string, paramNames: readonly string[]): string {
  const known = paramNames.length === 0 ? 'none' : paramNames.map((n) => `'${n}'`).join(', ');
  return `${show(param)} is not a parameter of the route (it has: ${known}): the rule would limit nothing`;
}

/** The kinds routes take (their rules keep the fields of {@link RouteRules}). */
type RouteKind = 'flow' | 'circuitBreakers' | 'hotParams';
type RuleLists = Record<RouteKind, unknown[]>;

function toRouteRules<Req, F>(
  lists: RuleLists,
  fallback: F | undefined,
  timeoutMs: number | undefined,
): RouteRules<Req, F> {
  return Object.freeze({
    flow: lists.flow as RouteRules<Req, F>['flow'],
    circuitBreakers: lists.circuitBreakers as RouteRules<Req, F>['circuitBreakers'],
    hotParams: lists.hotParams as RouteRules<Req, F>['hotParams'],
    fallback,
    timeoutMs,
  });
}

function readRouteOptions<Req, F>(
  input: unknown,
  path: string,
  reader: RuleReader,
  resource: string,
  paramNames: readonly string[] | undefined,
): RouteRules<Req, F> {
  const obj = reader.object(input, path) ?? {};
  reader.knownKeys(obj, ROUTE_KEYS, path);
  const lists: RuleLists = { flow: [], circuitBreakers: [], hotParams: [] };
  for (const option of RULE_OPTIONS) {
    const value = obj[option];
    if (value === undefined) continue;
    const items = Array.isArray(value) ? value : [value];
    items.forEach((item, i) => {
      const itemPath = Array.isArray(value) ? `${at(path, option)}[${i}]` : at(path, option);
      const rule = reader.object(item, itemPath);
      if (rule === undefined) return;
      const read = readRuleOf<Req>(option, rule, itemPath, reader, resource, paramNames);
      if (read !== undefined) lists[KIND_OF.get(option)!].push(read);
    });
  }
  const timeoutMs = reader.number(obj, 'timeoutMs', path, TIMEOUT, undefined);
  return toRouteRules<Req, F>(lists, readFunction(obj, 'fallback', path, reader) as F | undefined, timeoutMs);
}

/** Validates one rule of a route with the engine's own normalizer, reporting problems at `path`. */
function readRuleOf<Req>(
  option: RouteRuleOption,
  input: Record<string, unknown>,
  path: string,
  reader: RuleReader,
  resource: string,
  paramNames: readonly string[] | undefined,
): Readonly<Record<string, unknown>> | RouteHotParam<Req> | undefined {
  const { resource: _ignored, ...fields } = input;
  const kind = KIND_OF.get(option)!;
  if (kind !== 'hotParams') {
    validateRule(kind, { ...fields, resource }, path, reader);
    return Object.freeze(fields);
  }
  const { param, paramIndex, paramKey, ...rule } = fields;
  if (rule.key !== undefined && param !== undefined)
    reader.fail(path === '' ? 'param' : at(path, 'param'), 'give one of param and key, not both');
  for (const [key, value] of [
    ['paramIndex', paramIndex],
    ['paramKey', paramKey],
  ] as const) {
    if (value !== undefined)
      reader.fail(
        at(path, key),
        'is not an HTTP option: name the value with param (a path parameter name or a function (req, params) => value)',
      );
  }
  if (typeof param === 'string' && param.length > 0) {
    if (paramNames !== undefined && !paramNames.includes(param))
      reader.fail(at(path, 'param'), notAParam(param, paramNames));
  } else if (typeof param !== 'function' && !(param === undefined && rule.key !== undefined)) {
    reader.fail(
      at(path, 'param'),
      param === undefined
        ? 'is required (a path parameter name, a function (req, params) => value, or give key)'
        : `must be a path parameter name or a function, got ${show(param)}`,
    );
  }
  validateRule(
    'hotParams',
    rule.key !== undefined ? { ...rule, resource } : { ...rule, resource, paramKey: 'param' },
    path,
    reader,
  );
  return Object.freeze({ rule: Object.freeze(rule), param: param as string | HttpParamReader<Req> | undefined });
}

/** Runs the engine's normalizer on one rule and copies its problems to `reader` under `path`. */
function validateRule(kind: RuleKind, rule: Record<string, unknown>, path: string, reader: RuleReader): void {
  try {
    normalizeRuleSet({ [kind]: [rule] });
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error;
    const prefix = `${kind}[0]`;
    for (const issue of error.issues) {
      const rest = issue.path.startsWith(prefix) ? issue.path.slice(prefix.length) : `.${issue.path}`;
      reader.fail(path === '' ? rest.replace(/^\./, '') || 'options' : `${path}${rest}`, issue.message);
    }
  }
}
