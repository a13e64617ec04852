import { normalizeRuleSet } from '../engine/floodgate';
import type { RuleKindKey as RuleKind } from '../engine/kinds';
import { RuleValidationError } from '../kernel/errors';
import { RuleReader, show } from '../kernel/rule-reader';
import type { HttpParamReader } from './http-options';
import { at, HTTP_OPTION_KEYS, readFunction, readHttpOptions, type NormalizedHttpOptions } from './normalize-http-options';
import { RoutePattern } from './route-pattern';

/** A hotspot rule of a route, with how its value is read. */
export interface RouteHotParam<Req> {
  /** The rule's fields, without `resource`, `param`, `paramIndex` and `paramKey`. */
  readonly rule: Readonly<Record<string, unknown>>;
  /** A path parameter's name, or a function of the request. */
  readonly param: string | HttpParamReader<Req>;
}

/** A route's rules and fallback, validated; rules are in the users' form, without `resource`. */
export interface RouteRules<Req, F> {
  readonly flow: readonly Readonly<Record<string, unknown>>[];
  readonly circuitBreakers: readonly Readonly<Record<string, unknown>>[];
  readonly hotParams: readonly RouteHotParam<Req>[];
  readonly fallback: F | undefined;
}

/** The rule kinds of a route, by option name. */
export type RouteRuleOption = 'rateLimit' | 'circuitBreaker' | 'hotParam';

const KIND_OF: Readonly<Record<RouteRuleOption, 'flow' | 'circuitBreakers' | 'hotParams'>> = Object.freeze({
  rateLimit: 'flow',
  circuitBreaker: 'circuitBreakers',
  hotParam: 'hotParams',
});

const ROUTE_KEYS = ['rateLimit', 'circuitBreaker', 'hotParam', 'fallback'] as const;
const RESILIENCE_KEYS = [...HTTP_OPTION_KEYS, 'routes'] as const;
/** The resource named in validation messages of a per-route factory (the route is not known yet). */
const SOME_ROUTE = 'GET /route';

/** {@link ResilienceOptions} validated: the common options and the parsed routes, in order. */
export interface NormalizedResilienceOptions<Req, F> {
  readonly http: NormalizedHttpOptions<Req, F>;
  readonly routes: readonly { readonly pattern: RoutePattern; readonly rules: RouteRules<Req, F> }[];
}

/** A per-route factory's options validated: the common options, its route's rules, and its resource name if given. */
export interface NormalizedRouteFactoryOptions<Req, F> {
  readonly http: NormalizedHttpOptions<Req, F>;
  readonly rules: RouteRules<Req, F>;
  readonly resource: string | undefined;
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
      routes.push({ pattern, rules: readRouteOptions<Req, F>(value, path, reader, pattern.resource, pattern.paramNames) });
    }
  }
  reader.throwIfAny(`Invalid ${name} options`);
  return { http, routes };
}

/**
 * Validates one route's options (`routes[pattern]`, Fastify's `config.floodgate`).
 * @throws RuleValidationError naming every bad field.
 */
export function normalizeRouteOptions<Req, F>(input: unknown, path: string, resource: string, context: string): RouteRules<Req, F> {
  const reader = new RuleReader();
  const rules = readRouteOptions<Req, F>(input, path, reader, resource, undefined);
  reader.throwIfAny(context);
  return rules;
}

/**
 * Validates the flat options of a per-route factory (`rateLimit({ threshold, fallback })`):
 * common options, `resource`, and the fields of one rule of `option`'s kind.
 * @throws RuleValidationError naming every bad field.
 */
export function normalizeRouteFactoryOptions<Req, F>(option: RouteRuleOption, input: unknown, name: string): NormalizedRouteFactoryOptions<Req, F> {
  const reader = new RuleReader();
  const obj = reader.object(input, 'options') ?? {};
  const http = readHttpOptions<Req, F>(obj, '', reader);
  const resource = reader.string(obj, 'resource', '', undefined);
  const rule: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (!(HTTP_OPTION_KEYS as readonly string[]).includes(key) && key !== 'resource') rule[key] = value;
  }
  const lists: RuleLists = { flow: [], circuitBreakers: [], hotParams: [] };
  const read = readRuleOf<Req>(option, rule, '', reader, resource ?? SOME_ROUTE, undefined);
  if (read !== undefined) lists[KIND_OF[option]].push(read);
  reader.throwIfAny(`Invalid ${name} options`);
  return { http, rules: toRouteRules<Req, F>(lists, http.fallback), resource };
}

type RuleLists = Record<'flow' | 'circuitBreakers' | 'hotParams', unknown[]>;

function toRouteRules<Req, F>(lists: RuleLists, fallback: F | undefined): RouteRules<Req, F> {
  return Object.freeze({
    flow: lists.flow as RouteRules<Req, F>['flow'],
    circuitBreakers: lists.circuitBreakers as RouteRules<Req, F>['circuitBreakers'],
    hotParams: lists.hotParams as RouteRules<Req, F>['hotParams'],
    fallback,
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
  for (const option of ['rateLimit', 'circuitBreaker', 'hotParam'] as const) {
    const value = obj[option];
    if (value === undefined) continue;
    const items = Array.isArray(value) ? value : [value];
    items.forEach((item, i) => {
      const itemPath = Array.isArray(value) ? `${at(path, option)}[${i}]` : at(path, option);
      const rule = reader.object(item, itemPath);
      if (rule === undefined) return;
      const read = readRuleOf<Req>(option, rule, itemPath, reader, resource, paramNames);
      if (read !== undefined) lists[KIND_OF[option]].push(read);
    });
  }
  return toRouteRules<Req, F>(lists, readFunction(obj, 'fallback', path, reader) as F | undefined);
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
  if (option !== 'hotParam') {
    validateRule(KIND_OF[option], { ...fields, resource }, path, reader);
    return Object.freeze(fields);
  }
  const { param, paramIndex, paramKey, ...rule } = fields;
  for (const [key, value] of [['paramIndex', paramIndex], ['paramKey', paramKey]] as const) {
    if (value !== undefined) reader.fail(at(path, key), 'is not an HTTP option: name the value with param (a path parameter name or a function (req, params) => value)');
  }
  if (typeof param === 'string' && param.length > 0) {
    if (paramNames !== undefined && !paramNames.includes(param)) {
      const known = paramNames.length === 0 ? 'none' : paramNames.map((n) => `'${n}'`).join(', ');
      reader.fail(at(path, 'param'), `${show(param)} is not a parameter of the route (it has: ${known})`);
    }
  } else if (typeof param !== 'function') {
    reader.fail(
      at(path, 'param'),
      param === undefined ? 'is required (a path parameter name or a function (req, params) => value)' : `must be a path parameter name or a function, got ${show(param)}`,
    );
  }
  validateRule('hotParams', { ...rule, resource, paramKey: 'param' }, path, reader);
  return Object.freeze({ rule: Object.freeze(rule), param: param as string | HttpParamReader<Req> });
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
