import 'reflect-metadata';
import { RuleValidationError, type RuleIssue } from '@floodgate/core';
import {
  readHandlerRule,
  type CircuitBreakerOptions,
  type HandlerRule,
  type HandlerRuleOption,
  type HotParamOptions,
  type RateLimitOptions,
} from './handler-rule-options';

/**
 * The reflect-metadata keys under which the NestJS decorators record their options on a
 * handler (the method function, as Nest's `Reflector` reads it) or a controller class. Each
 * value is a frozen array of validated rules, in the order written.
 */
export const NESTJS_METADATA_KEYS = Object.freeze({
  /** `@RateLimit` rules. */
  rateLimit: 'floodgate:nestjs:rate-limit',
  /** `@CircuitBreaker` rules. */
  circuitBreaker: 'floodgate:nestjs:circuit-breaker',
  /** `@HotParam` rules. */
  hotParam: 'floodgate:nestjs:hot-param',
  /** `@SkipFloodgate()`: a boolean. */
  skip: 'floodgate:nestjs:skip',
} as const);

/** A decorator for a controller class (every handler) or one handler method. */
export type HandlerDecorator = ClassDecorator & MethodDecorator;

/**
 * Limits a controller's handlers, or one handler, with a flow rule (QPS or concurrency limit)
 * on the handler's resource (`ControllerClass.methodName`). Only records the rule: the
 * {@link FloodgateInterceptor} enters the resource once per request and holds the entry
 * until the response ends. On a class, it applies to each handler that has no `@RateLimit`
 * of its own (each handler keeps its own counters). Stacks: several rules all apply.
 *
 * Not the method-wrapping `@RateLimit` of `@floodgate/core`, which suits services: on a
 * controller that one would make a second entry per request, so the module refuses it at
 * start-up.
 *
 * @throws RuleValidationError (`ERR_INVALID_RULE`) when the class is defined, naming the
 * handler and the field, for invalid options; a `TypeError` on anything but a class or method.
 * @example
 * @Controller('search')
 * export class SearchController {
 *   @Get() @RateLimit({ threshold: 20 })            // 20 requests per second
 *   search(@Query('q') q: string) { ... }
 * }
 */
export function RateLimit(options: RateLimitOptions): HandlerDecorator {
  return ruleDecorator('@RateLimit', 'rateLimit', options);
}

/**
 * Guards a controller's handlers, or one handler, with a circuit breaker on the handler's
 * resource. A request fails when its handler throws (except an HTTP 4xx exception) or the
 * response is >= 500 (the module's `isFailure`), and is slow by its time to the response's
 * end. While open, requests answer 503 with `Retry-After`. On a class, it applies to each
 * handler without a `@CircuitBreaker` of its own.
 *
 * @throws RuleValidationError when the class is defined, for invalid options (naming them).
 * @example
 * @Get('feed')
 * @CircuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 })
 * feed() { ... }
 */
export function CircuitBreaker(options: CircuitBreakerOptions): HandlerDecorator {
  return ruleDecorator('@CircuitBreaker', 'circuitBreaker', options);
}

/**
 * Limits a controller's handlers, or one handler, per distinct value of a request parameter:
 * a route parameter (`param`), a query parameter (`query`), a header (`header`), a property of
 * the authenticated user (`user`) or the client address (`ip: true`). Header names match in
 * any letter case; a repeated query key or header counts each value; a request without the
 * value counts as `''` (never unlimited). A `param` name the handler's route does not have
 * fails at start-up. On a class, it applies to each handler without a `@HotParam` of its own.
 *
 * @throws RuleValidationError when the class is defined, for invalid options (naming them).
 * @example
 * @Get(':id')
 * @HotParam({ param: 'id', threshold: 5 })                   // 5/s per user id
 * @HotParam({ header: 'x-api-key', threshold: 50, specificItems: { '': 5 } })
 * find(@Param('id') id: string) { ... }
 */
export function HotParam(options: HotParamOptions): HandlerDecorator {
  return ruleDecorator('@HotParam', 'hotParam', options);
}

/**
 * Leaves a controller's handlers, or one handler, unguarded by the {@link FloodgateInterceptor}
 * (health checks, metrics). `@SkipFloodgate(false)` on a handler guards it again under a
 * skipping class. A handler that is skipped and carries Floodgate rules fails at start-up.
 *
 * @example
 * @Controller('health') @SkipFloodgate()
 * export class HealthController { ... }
 */
export function SkipFloodgate(skip = true): HandlerDecorator {
  if (typeof skip !== 'boolean') throw new TypeError(`@SkipFloodgate(skip) takes a boolean, got ${typeof skip}`);
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const site = siteOf('@SkipFloodgate', target, key, descriptor);
    Reflect.defineMetadata(NESTJS_METADATA_KEYS.skip, skip, site.holder);
  };
}

/** Where a decorator was applied: the object its metadata goes on, and a name for messages. */
interface Site {
  readonly holder: object;
  readonly label: string;
  readonly isClass: boolean;
}

function ruleDecorator(name: string, option: HandlerRuleOption, options: unknown): HandlerDecorator {
  // A copy, so changing the options object afterwards changes nothing.
  const input = typeof options === 'object' && options !== null && !Array.isArray(options) ? { ...options } : options;
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const site = siteOf(name, target, key, descriptor);
    const issues: RuleIssue[] = [];
    const rule = readHandlerRule(option, input, '', issues);
    if (rule?.resource !== undefined && site.isClass) {
      issues.push({
        path: 'resource',
        message: "names one handler's resource: give it on the handler, not on the controller",
      });
    }
    if (rule === undefined || issues.length > 0) throw new RuleValidationError(issues, `${name} on ${site.label}`);
    const key_ = NESTJS_METADATA_KEYS[option];
    const existing = (Reflect.getOwnMetadata(key_, site.holder) as readonly HandlerRule[] | undefined) ?? [];
    // Decorators apply bottom-up: putting this one first keeps the order they are written in.
    Reflect.defineMetadata(key_, Object.freeze([rule, ...existing]), site.holder);
  };
}

function siteOf(
  name: string,
  target: object,
  key: string | symbol | undefined,
  descriptor: PropertyDescriptor | undefined,
): Site {
  if (key === undefined && typeof target === 'function')
    return { holder: target, label: target.name || '(anonymous class)', isClass: true };
  if (typeof key === 'object' && key !== null && 'kind' in key) {
    throw new TypeError(
      `${name} is a NestJS decorator: compile with experimentalDecorators and emitDecoratorMetadata, as NestJS requires`,
    );
  }
  const owner = typeof target === 'function' ? target : (target as { constructor?: { name?: string } }).constructor;
  const label = `${owner?.name || '(anonymous class)'}.${String(key)}`;
  if (descriptor === undefined || typeof descriptor.value !== 'function') {
    throw new TypeError(`${name} decorates a controller class or a handler method, not ${label}`);
  }
  return { holder: descriptor.value as object, label, isClass: false };
}
