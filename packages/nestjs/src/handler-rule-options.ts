import { RuleValidationError, type RuleIssue } from '@floodgate/core';
import {
  normalizeRuleSet,
  type CircuitBreakerRuleOptions,
  type FlowRuleOptions,
  type HotParamRuleOptions,
} from '@floodgate/core/rules';
import { show } from '@floodgate/core/http';

/**
 * A flow rule (QPS or concurrency limit) on a handler: a flow rule without `resource` (the
 * handler names it), as `@RateLimit` and the module's `defaults.rateLimit` take it.
 */
export interface RateLimitOptions extends Omit<FlowRuleOptions, 'resource'> {
  /**
   * The resource the handler's requests are counted as (handler decorators only). Every
   * Floodgate decorator on one handler that gives it must give the same name.
   * @defaultValue `ControllerClass.methodName`
   */
  readonly resource?: string;
}

/** A circuit breaker rule on a handler: a breaker rule without `resource`. */
export interface CircuitBreakerOptions extends Omit<CircuitBreakerRuleOptions, 'resource'> {
  /** As {@link RateLimitOptions.resource}. @defaultValue `ControllerClass.methodName` */
  readonly resource?: string;
}

/**
 * Reads a hotspot value from the platform's request (Express `req`, Fastify `request`). What it
 * returns is counted as {@link HotParamSources} describes; it runs before the route's pipes.
 */
// The request type depends on the platform; `any` lets `(req: Request) => req.ip` in.
export type HotParamReader = (request: any) => unknown;

/** Where `@HotParam` reads the value it counts per: exactly one of these. */
export interface HotParamSources {
  /**
   * A route parameter's name (`'id'` for `@Get(':id')`, checked against the handler's paths at
   * start-up), or a function of the request.
   */
  readonly param: string | HotParamReader;
  /** A query parameter's name; a repeated key (`?id=a&id=b`) counts each value. */
  readonly query: string;
  /** A request header's name, in any letter case; a repeated header counts each value. */
  readonly header: string;
  /**
   * A property of the authenticated user (`req.user`, set by a guard such as Passport's
   * `AuthGuard`), or a dotted path (`'org.id'`). A request with a user lacking it fails (500),
   * naming the option: a wrong name is never silently unlimited.
   */
  readonly user: string;
  /**
   * `true`: the client's address (`req.ip`, which follows the platform's trust-proxy setting);
   * IPv6 addresses count per /64 network, IPv4-mapped IPv6 addresses as IPv4.
   */
  readonly ip: true;
}

type ExactlyOne<T> = { [K in keyof T]: Pick<T, K> & { readonly [O in Exclude<keyof T, K>]?: undefined } }[keyof T];

/**
 * A hotspot rule on a handler: a hotspot rule without `resource`, `paramIndex` and `paramKey`,
 * plus exactly one value source ({@link HotParamSources}). A request without the value (no
 * such query parameter or header, no `req.user`, an empty value) is not let through unlimited:
 * all such requests are counted together as the value `''` (give it its own threshold with
 * `specificItems: { '': n }`).
 */
export type HotParamOptions = Omit<HotParamRuleOptions, 'resource' | 'paramIndex' | 'paramKey'> & {
  /** As {@link RateLimitOptions.resource}. @defaultValue `ControllerClass.methodName` */
  readonly resource?: string;
} & ExactlyOne<HotParamSources>;

/** A hotspot value source, validated: which part of the request, and the name in it. */
export type HotParamSource =
  | { readonly kind: 'param' | 'query' | 'header' | 'user'; readonly name: string }
  | { readonly kind: 'ip' }
  | { readonly kind: 'function'; readonly read: HotParamReader };

/** The rule kinds a handler carries, by option name. */
export type HandlerRuleOption = 'rateLimit' | 'circuitBreaker' | 'hotParam';

/** One rule of a handler, validated: its fields in the users' form, without `resource` or source. */
export interface HandlerRule {
  readonly option: HandlerRuleOption;
  /** The rule's fields (frozen), to declare with the handler's resource. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** The `resource` option, if given. */
  readonly resource: string | undefined;
  /** `hotParam`: where the value comes from. */
  readonly source: HotParamSource | undefined;
}

const KIND_OF: Readonly<Record<HandlerRuleOption, 'flow' | 'circuitBreakers' | 'hotParams'>> = Object.freeze({
  rateLimit: 'flow',
  circuitBreaker: 'circuitBreakers',
  hotParam: 'hotParams',
});

const SOURCE_KEYS = ['param', 'query', 'header', 'user', 'ip'] as const;

/** Options of the core decorators that have no meaning on a Nest handler, with what to do instead. */
const NOT_HERE: Readonly<Record<string, string>> = Object.freeze({
  floodgate: "the engine is the module's: FloodgateModule.forRoot({ floodgate })",
  fallback: 'blocks are answered by FloodgateExceptionFilter; replace it to answer otherwise',
  blockHandler: 'blocks are answered by FloodgateExceptionFilter; replace it to answer otherwise',
  exceptionsToIgnore: 'give the module an isFailure(status, error) option',
  paramIndex:
    'handler arguments are not resolved yet when the request is admitted: name the value with param, query, header, user or ip',
  paramKey: 'name the value with param, query, header, user or ip',
});

/** RFC 9110 token characters: what a header name is made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Validates one rule of a handler (a decorator's options, or a module default), recording every
 * problem in `issues` under `path`; returns the rule when it had none.
 */
export function readHandlerRule(
  option: HandlerRuleOption,
  input: unknown,
  path: string,
  issues: RuleIssue[],
): HandlerRule | undefined {
  const before = issues.length;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    issues.push({ path: path || 'options', message: `must be an object, got ${show(input)}` });
    return undefined;
  }
  const fields: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  const resource = fields.resource;
  delete fields.resource;
  if (resource !== undefined && (typeof resource !== 'string' || resource.length === 0)) {
    issues.push({ path: at(path, 'resource'), message: `must be a non-empty string, got ${show(resource)}` });
  }
  for (const key of Object.keys(NOT_HERE)) {
    if (fields[key] === undefined) continue;
    if (option !== 'hotParam' && (key === 'paramIndex' || key === 'paramKey')) continue; // the engine names it
    issues.push({ path: at(path, key), message: `is not an option of a NestJS handler: ${NOT_HERE[key]}` });
    delete fields[key];
  }
  let source: HotParamSource | undefined;
  if (option === 'hotParam') {
    source = readSource(fields, path, issues);
    for (const key of SOURCE_KEYS) delete fields[key];
  }
  // The engine's own validation of the rule's fields, with any resource and parameter name.
  const probe =
    option === 'hotParam' ? { ...fields, resource: 'handler', paramKey: 'value' } : { ...fields, resource: 'handler' };
  try {
    normalizeRuleSet({ [KIND_OF[option]]: [probe] });
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error;
    const prefix = `${KIND_OF[option]}[0]`;
    for (const issue of error.issues) {
      const rest = issue.path.startsWith(prefix) ? issue.path.slice(prefix.length).replace(/^\./, '') : issue.path;
      issues.push({ path: rest === '' ? path || 'options' : at(path, rest), message: issue.message });
    }
  }
  if (issues.length > before) return undefined;
  return Object.freeze({ option, fields: Object.freeze(fields), resource: resource as string | undefined, source });
}

function readSource(fields: Record<string, unknown>, path: string, issues: RuleIssue[]): HotParamSource | undefined {
  const given = SOURCE_KEYS.filter((key) => fields[key] !== undefined);
  if (given.length !== 1) {
    issues.push({
      path: path || 'options',
      message:
        given.length === 0
          ? 'needs the value to count per: one of param, query, header, user or ip'
          : `give one value source, not ${given.join(' and ')}`,
    });
    return undefined;
  }
  const key = given[0]!;
  const value = fields[key];
  if (key === 'ip') {
    if (value === true) return { kind: 'ip' };
    issues.push({ path: at(path, 'ip'), message: `must be true, got ${show(value)}` });
    return undefined;
  }
  if (key === 'param' && typeof value === 'function') return { kind: 'function', read: value as HotParamReader };
  if (typeof value !== 'string' || value.length === 0) {
    const what =
      key === 'param'
        ? 'a route parameter name or a function (request) => value'
        : `a non-empty ${key === 'header' ? 'header' : key === 'user' ? 'property' : 'parameter'} name`;
    issues.push({ path: at(path, key), message: `must be ${what}, got ${show(value)}` });
    return undefined;
  }
  if (key === 'header') {
    if (!HEADER_NAME.test(value)) {
      issues.push({
        path: at(path, 'header'),
        message: `must be a header name (letters, digits and !#$%&'*+.^_\`|~-), got ${show(value)}`,
      });
      return undefined;
    }
    // Node and Fastify give header names in lower case: a name in any case reads the same header.
    return { kind: 'header', name: value.toLowerCase() };
  }
  if (key === 'user' && value.split('.').some((part) => part.length === 0)) {
    issues.push({
      path: at(path, 'user'),
      message: `must be a property name or a dotted path ('org.id'), got ${show(value)}`,
    });
    return undefined;
  }
  return { kind: key, name: value };
}

/** `path.key`, or `key` at the top level. */
export function at(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
