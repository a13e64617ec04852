import { RuleValidationError, type BlockError, type Floodgate, type RuleIssue } from '@floodgate/core';
import { normalizeRuleSet, type RuleSet, type RuleSetOptions } from '@floodgate/core/rules';
import {
  HttpGuard,
  type HttpPriorityHeaderOptions,
  type Priority,
  show,
  type RateLimitHeadersDraft,
} from '@floodgate/core/http';
import type { ExecutionContext, FactoryProvider, ModuleMetadata, Type } from '@nestjs/common';
import {
  at,
  readHandlerRule,
  type CircuitBreakerOptions,
  type HandlerRule,
  type HandlerRuleOption,
  type HotParamOptions,
  type RateLimitOptions,
} from './handler-rule-options';

/** One rule or a list of them. */
type OneOrMany<T> = T | readonly T[];

/**
 * Rules for every guarded handler that has none of that kind of its own (from its decorators
 * or its controller's): each handler gets its own copy, counted under its own resource.
 */
export interface HandlerDefaults {
  /** Flow rules, as `@RateLimit` takes them (without `resource`). */
  readonly rateLimit?: OneOrMany<Omit<RateLimitOptions, 'resource'>>;
  /** Circuit breaker rules, as `@CircuitBreaker` takes them (without `resource`). */
  readonly circuitBreaker?: OneOrMany<Omit<CircuitBreakerOptions, 'resource'>>;
  /** Hotspot rules, as `@HotParam` takes them (without `resource`). */
  readonly hotParam?: OneOrMany<Omit<HotParamOptions, 'resource'>>;
}

/** Options of {@link FloodgateModule.forRoot} (and what a `forRootAsync` factory returns, but `global` and `exceptionFilter`). */
export interface FloodgateModuleOptions {
  /**
   * The engine that guards the handlers; it is also provided for injection as `Floodgate`.
   * @defaultValue the shared `floodgate` engine
   */
  readonly floodgate?: Floodgate;
  /**
   * Rules declared on the engine at start-up (as code-declared rules: rules loaded later for
   * the same kind and resource take precedence) and withdrawn when the app closes. A handler's
   * resource is `ControllerClass.methodName`; hotspot rules on it name a route parameter with
   * `paramKey`. A rule naming a controller with a method that is no handler of it fails at
   * start-up.
   * @defaultValue none
   */
  readonly rules?: RuleSetOptions;
  /** Rules for every guarded handler without its own of that kind. @defaultValue none */
  readonly defaults?: HandlerDefaults;
  /**
   * Guards every handler of the app (an `APP_INTERCEPTOR`). With `false`, guard controllers or
   * handlers with `@UseInterceptors(FloodgateInterceptor)`; a handler carrying Floodgate
   * decorators outside it then fails at start-up. Decided when the module is defined: give it
   * to `forRootAsync` itself, not from its factory.
   * @defaultValue true
   */
  readonly global?: boolean;
  /**
   * Answers blocks with {@link FloodgateExceptionFilter} (an `APP_FILTER`). With `false`,
   * register your own `@Catch(BlockError)` filter. Decided when the module is defined.
   * @defaultValue true
   */
  readonly exceptionFilter?: boolean;
  /**
   * Leaves a request unguarded when it returns true (called per request, before anything is
   * counted); what it throws fails the request.
   * @defaultValue none: every request of a guarded handler is guarded
   */
  readonly skipIf?: (context: ExecutionContext) => boolean;
  /**
   * Names the caller, for origin-specific flow rules (`limitOrigin`) and authority rules.
   * @defaultValue every caller is `''`
   */
  readonly origin?: (request: any) => string;
  /**
   * The request's priority under overload: a function of the request (trusted; `undefined` is
   * `'default'`), or a header the client sends, `{ header: 'x-priority', max }` (not trusted: an
   * unknown value is `'default'`, and no claim rises above `max`, `'default'` unless raised).
   * @defaultValue every request is `'default'`
   */
  readonly priority?: ((request: any) => Priority | undefined) | HttpPriorityHeaderOptions;
  /**
   * Observes each block before it is answered; what it throws fails the request (500).
   * @defaultValue none
   */
  readonly onBlock?: (error: BlockError, request: any) => void;
  /**
   * The form of the IETF RateLimit headers on blocked responses to QPS rules, or `false` for
   * none (`Retry-After` is always sent where the wait is known).
   * @defaultValue 'draft-8'
   */
  readonly headers?: RateLimitHeadersDraft | false;
  /**
   * Whether a finished request counts as failed for circuit breakers, from its status and the
   * error its handler threw (`undefined` when none). Blocked and aborted requests never fail.
   * @defaultValue `status >= 500`, or a thrown error that is not an HTTP 4xx error
   */
  readonly isFailure?: (status: number, error: unknown) => boolean;
}

/** Options of {@link FloodgateModule.forRootAsync}: how to make the options, and what is decided when the module is defined. */
export interface FloodgateModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Makes the options; its parameters are `inject`'s providers. */
  readonly useFactory?: (...args: any[]) => FloodgateModuleFactoryOptions | Promise<FloodgateModuleFactoryOptions>;
  /** The providers `useFactory` receives. @defaultValue none */
  readonly inject?: FactoryProvider['inject'];
  /** A class (instantiated by the module) whose `createFloodgateOptions()` makes the options. */
  readonly useClass?: Type<FloodgateOptionsFactory>;
  /** As `useClass`, but an existing provider from `imports`. */
  readonly useExisting?: Type<FloodgateOptionsFactory>;
  /** As {@link FloodgateModuleOptions.global}. @defaultValue true */
  readonly global?: boolean;
  /** As {@link FloodgateModuleOptions.exceptionFilter}. @defaultValue true */
  readonly exceptionFilter?: boolean;
}

/** What a `forRootAsync` factory returns: the options but those decided when the module is defined. */
export type FloodgateModuleFactoryOptions = Omit<FloodgateModuleOptions, 'global' | 'exceptionFilter'>;

/** A class making the module's options, for `forRootAsync({ useClass })`. */
export interface FloodgateOptionsFactory {
  /** Makes the options. */
  createFloodgateOptions(): FloodgateModuleFactoryOptions | Promise<FloodgateModuleFactoryOptions>;
}

/**
 * Reads the options the module's definition decides (`global`, `exceptionFilter`), given to
 * `forRoot` or `forRootAsync` itself.
 * @throws RuleValidationError naming a value that is not a boolean.
 */
export function readDefinitionOptions(
  input: { readonly global?: unknown; readonly exceptionFilter?: unknown } | undefined,
): { readonly global: boolean; readonly exceptionFilter: boolean } {
  const issues: RuleIssue[] = [];
  const read = (key: (typeof DEFINITION_KEYS)[number]): boolean => {
    const value = input?.[key];
    if (value === undefined) return FLOODGATE_MODULE_DEFAULTS[key];
    if (typeof value === 'boolean') return value;
    issues.push({ path: key, message: `must be a boolean, got ${show(value)}` });
    return FLOODGATE_MODULE_DEFAULTS[key];
  };
  const result = { global: read('global'), exceptionFilter: read('exceptionFilter') };
  if (issues.length > 0) throw new RuleValidationError(issues, 'Invalid FloodgateModule options');
  return result;
}

/** Defaults of {@link FloodgateModuleOptions} that the module itself decides. */
export const FLOODGATE_MODULE_DEFAULTS = Object.freeze({
  /** Guard every handler of the app with an `APP_INTERCEPTOR`. */
  global: true,
  /** Answer blocks with `FloodgateExceptionFilter` as an `APP_FILTER`. */
  exceptionFilter: true,
} as const);

/** The injection token of the module's options. */
export const FLOODGATE_MODULE_OPTIONS = Symbol.for('floodgate.nestjs.moduleOptions');

/** {@link FloodgateModuleOptions} validated. */
export interface NormalizedModuleOptions {
  /** The HTTP guard: engine, origin, priority, onBlock, headers and isFailure, validated by core. */
  readonly guard: HttpGuard<unknown, never>;
  readonly rules: Partial<RuleSet> | undefined;
  /** The default rules, by kind. */
  readonly defaults: Readonly<Record<HandlerRuleOption, readonly HandlerRule[]>>;
  readonly skipIf: ((context: ExecutionContext) => boolean) | undefined;
}

const HTTP_KEYS = ['floodgate', 'origin', 'priority', 'onBlock', 'headers', 'isFailure'] as const;
const OWN_KEYS = ['rules', 'defaults', 'skipIf'] as const;
/** Options the module's definition reads (forRoot takes them out before the rest is provided). */
const DEFINITION_KEYS = ['global', 'exceptionFilter'] as const;
const DEFAULT_KEYS = ['rateLimit', 'circuitBreaker', 'hotParam'] as const;

/**
 * Validates the module's options, every problem at once.
 * @throws RuleValidationError naming each bad option, rule and field.
 */
export function readModuleOptions(input: unknown): NormalizedModuleOptions {
  const issues: RuleIssue[] = [];
  const obj =
    input === undefined
      ? {}
      : typeof input === 'object' && input !== null && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : undefined;
  if (obj === undefined)
    throw new RuleValidationError(
      [{ path: 'options', message: `must be an object, got ${show(input)}` }],
      'Invalid FloodgateModule options',
    );
  for (const key of Object.keys(obj)) {
    if ((DEFINITION_KEYS as readonly string[]).includes(key)) {
      issues.push({
        path: key,
        message: 'is decided when the module is defined: give it to forRootAsync({ ... }) itself, not from its factory',
      });
    } else if (!(HTTP_KEYS as readonly string[]).includes(key) && !(OWN_KEYS as readonly string[]).includes(key)) {
      issues.push({
        path: key,
        message: `unknown option (allowed: ${[...HTTP_KEYS, ...OWN_KEYS, ...DEFINITION_KEYS].join(', ')})`,
      });
    }
  }
  if (obj.skipIf !== undefined && typeof obj.skipIf !== 'function')
    issues.push({ path: 'skipIf', message: `must be a function, got ${show(obj.skipIf)}` });

  let rules: Partial<RuleSet> | undefined;
  if (obj.rules !== undefined) {
    try {
      rules = normalizeRuleSet(obj.rules);
    } catch (error) {
      if (!(error instanceof RuleValidationError)) throw error;
      for (const issue of error.issues)
        issues.push({ path: issue.path === 'rules' ? 'rules' : at('rules', issue.path), message: issue.message });
    }
  }

  const defaults: Record<HandlerRuleOption, HandlerRule[]> = { rateLimit: [], circuitBreaker: [], hotParam: [] };
  if (obj.defaults !== undefined) {
    const table = obj.defaults;
    if (typeof table !== 'object' || table === null || Array.isArray(table)) {
      issues.push({ path: 'defaults', message: `must be an object, got ${show(table)}` });
    } else {
      for (const [option, value] of Object.entries(table)) {
        if (!(DEFAULT_KEYS as readonly string[]).includes(option)) {
          issues.push({
            path: at('defaults', option),
            message: `unknown option (allowed: ${DEFAULT_KEYS.join(', ')})`,
          });
          continue;
        }
        const list: readonly unknown[] = Array.isArray(value) ? value : [value];
        list.forEach((item, i) => {
          const path = Array.isArray(value) ? `defaults.${option}[${i}]` : `defaults.${option}`;
          const rule = readHandlerRule(option as HandlerRuleOption, item, path, issues);
          if (rule?.resource !== undefined)
            issues.push({
              path: at(path, 'resource'),
              message: 'a default applies to many handlers, each under its own resource: give no resource',
            });
          else if (rule !== undefined) defaults[option as HandlerRuleOption].push(rule);
        });
      }
    }
  }

  let guard: HttpGuard<unknown, never> | undefined;
  const http: Record<string, unknown> = {};
  for (const key of HTTP_KEYS) if (obj[key] !== undefined) http[key] = obj[key];
  try {
    guard = HttpGuard.resilience<unknown, never>(http, 'FloodgateModule');
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0 || guard === undefined)
    throw new RuleValidationError(issues, 'Invalid FloodgateModule options');
  return { guard, rules, defaults, skipIf: obj.skipIf as NormalizedModuleOptions['skipIf'] };
}
