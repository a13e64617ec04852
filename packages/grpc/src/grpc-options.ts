import { status as Status, type Metadata } from '@grpc/grpc-js';
import { floodgate as sharedEngine, RuleValidationError, type Floodgate, type RuleIssue } from '@floodgate/core';
import {
  normalizeRuleSet,
  type AdaptiveThrottlingRuleOptions,
  type CircuitBreakerRuleOptions,
  type FlowRuleOptions,
  type HotParamRuleOptions,
  type RetryBudgetRuleOptions,
  type RuleSetOptions,
} from '@floodgate/core/rules';
import {
  claimedPriority,
  givenPriority,
  isPriority,
  MAX_DURATION_MS,
  PRIORITIES,
  show,
  type Priority,
} from '@floodgate/core/http';
import { RULE_KIND_NAMES } from '@floodgate/core/metrics';
import { isParamSource } from './call-params';

/** Defaults of the gRPC interceptors' options. */
export const GRPC_DEFAULTS = Object.freeze({
  /**
   * The status codes that count as failures for circuit breakers: those of a service in trouble
   * (an unexpected error, a deadline passed, an internal error, unavailable), not those of a
   * caller's bad request (`INVALID_ARGUMENT`, `NOT_FOUND`, ...).
   */
  failureCodes: Object.freeze([Status.UNKNOWN, Status.DEADLINE_EXCEEDED, Status.INTERNAL, Status.UNAVAILABLE]),
  /** The longest server pushback a client honours, in ms: a server asking for more pauses its method this long. */
  maxPushbackMs: 60_000,
  /** Retries of one call at most, after its first attempt (gRFC A6 caps attempts at 5: 4 retries). */
  maxRetries: 2,
  /** Backoff before the first retry: up to 50 ms, doubling (as the outbound HTTP guard's). */
  baseDelayMs: 50,
  /** Backoff never longer than 2 s. */
  maxDelayMs: 2000,
  /** Only `UNAVAILABLE` is retried: the code of a server that did not process the call (gRPC's status guide). */
  retryableCodes: Object.freeze([Status.UNAVAILABLE]),
  /** Server-streaming calls are not retried, unless asked for. */
  serverStreaming: false,
} as const);

/**
 * Retries of a client's calls (gRFC A6's retry policy, as it fits an interceptor): a call is
 * retried only when its status is in `statusCodes`, it is unary (or server-streaming, with
 * `serverStreaming`), and nothing of the server's answer reached the caller (no response
 * metadata, no message: gRFC A6's commit), after a backoff with full jitter through the engine's
 * clock and random source (at least the server's `grpc-retry-pushback-ms`; a negative or malformed
 * pushback means no retry), never past the call's deadline, and only while the method's retry
 * budget allows (every retry spends it, so a failing server sees at most about 1.2× the calls
 * offered).
 */
export interface GrpcRetryOptions {
  /** Most retries of one call after its first attempt, within [0, 4] (gRFC A6's `maxAttempts` − 1). @defaultValue 2 */
  readonly maxRetries?: number;
  /**
   * The backoff before retry n (from 1) is drawn uniformly from [0, min(maxDelayMs,
   * baseDelayMs × 2^(n−1))] ms, within [0, 2^31 − 1].
   * @defaultValue 50
   */
  readonly baseDelayMs?: number;
  /** The longest backoff, in ms, within [0, 2^31 − 1]. @defaultValue 2000 */
  readonly maxDelayMs?: number;
  /** The status codes retried (grpc-js's `status` values, each within [1, 16]). @defaultValue `[UNAVAILABLE]` */
  readonly statusCodes?: readonly Status[];
  /** Whether server-streaming calls are retried too (before any response metadata or message). @defaultValue false */
  readonly serverStreaming?: boolean;
  /**
   * The method's retry budget: a retry budget rule without `resource` (Finagle's defaults: 20 % of
   * first attempts over 10 s, plus 10 retries a second). A retry beyond it is not sent: the caller
   * gets the status the last attempt got.
   * @defaultValue `{}` (the defaults)
   */
  readonly budget?: Omit<RetryBudgetRuleOptions, 'resource'>;
}

/** A flow rule (QPS or concurrency limit) on a method: a flow rule without `resource` (the method names it). */
export type MethodRateLimitOptions = Omit<FlowRuleOptions, 'resource'>;

/** A circuit breaker rule on a method: a breaker rule without `resource` (the method names it). */
export type MethodCircuitBreakerOptions = Omit<CircuitBreakerRuleOptions, 'resource'>;

/**
 * A hotspot rule on a server method: a hotspot rule without `resource`, `paramIndex` and
 * `paramKey`; `param` names the value instead.
 */
export interface MethodHotParamOptions extends Omit<HotParamRuleOptions, 'resource' | 'paramIndex' | 'paramKey'> {
  /**
   * The value counted: `'metadata:<key>'` (the first value of a request metadata key, such as
   * `'metadata:x-user-id'`; not a `-bin` key) or `'message:<field>'` (a field of the request
   * message, or of the first message of a client stream, as the loaded message names it:
   * `'message:userId'`, `'message:user.id'` for a nested one; strings, numbers, booleans and
   * bigints are counted, any other value is no value). It is the rule's `paramKey`: loaded
   * hotspot rules on the method read the same keys.
   */
  readonly param: string;
}

/** What guards a client method: rules of each kind (one or a list). */
export interface ClientMethodRules {
  /** Flow rules (a QPS limit, or a concurrency limit: a bulkhead). */
  readonly rateLimit?: MethodRateLimitOptions | readonly MethodRateLimitOptions[];
  /** Circuit breaker rules. */
  readonly circuitBreaker?: MethodCircuitBreakerOptions | readonly MethodCircuitBreakerOptions[];
}

/** What guards a server method: rules of each kind (one or a list). */
export interface ServerMethodRules extends ClientMethodRules {
  /** Hotspot rules (per user, per tenant, per message field). */
  readonly hotParam?: MethodHotParamOptions | readonly MethodHotParamOptions[];
}

/**
 * A call's priority read from a metadata key (`{ metadata: 'x-priority' }`), as the HTTP
 * adapters read one from a header (core's `claimedPriority`): the key's one value, `critical`,
 * `default` or `sheddable` in any letter case. No value, the key sent more than once, an unknown
 * word or a binary value is `'default'`, and no value raises a call above `max`.
 */
export interface GrpcPriorityMetadataOptions {
  /** The metadata key, in any letter case (gRPC keys are lower case); not a `-bin` key: a priority is a word. */
  readonly metadata: string;
  /**
   * The highest priority the metadata may claim; a higher one is lowered to it. On a server the
   * metadata is what the client sent, not trusted: raise `max` to `'critical'` only where every
   * client that can reach the server is trusted (behind a proxy that sets or strips the key). On
   * a client the metadata is the application's own, set per call, so every priority is taken.
   * @defaultValue `'default'` for `serverInterceptor()`, `'critical'` for `clientInterceptor()`
   */
  readonly max?: Priority;
}

/** The call a `priority` function is asked about. */
export interface GrpcCallInfo {
  /** The method's path (`'/demo.Echo/Say'`). */
  readonly path: string;
  /** The call's metadata: the request metadata received (server), or the metadata the call sends (client). */
  readonly metadata: Metadata;
}

/** Options both interceptors take. */
export interface GrpcOptions<Rules> {
  /** The engine that guards the calls. @defaultValue the shared `floodgate` engine */
  readonly floodgate?: Floodgate;
  /**
   * The call's priority under overload (`'critical'`, `'default'`, `'sheddable'`, see
   * `Priority`), given to its entry: a function of the call (trusted: the application decides,
   * from the method or what an interceptor before this one authenticated; `undefined` is
   * `'default'`, a value that is not a priority fails the call), or a metadata key
   * ({@link GrpcPriorityMetadataOptions}: not trusted on a server, capped by `max`). On a client,
   * a priority set in the call's metadata reaches the server too: `{ metadata: 'x-priority' }`
   * on both sides carries it end to end.
   * @defaultValue every call is `'default'`
   */
  readonly priority?: ((call: GrpcCallInfo) => Priority | undefined) | GrpcPriorityMetadataOptions;
  /**
   * The status codes of a finished call that count as failures for circuit breakers (grpc-js's
   * `status` values, each within [1, 16]).
   * @defaultValue `[UNKNOWN, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE]`
   */
  readonly failureCodes?: readonly Status[];
  /**
   * Rules by method path (`'/demo.Echo/Say'`), declared on the method's resource when the
   * interceptor is made. Loaded rules for the resource take precedence, as for any resource.
   * @defaultValue none
   */
  readonly methods?: Readonly<Record<string, Rules>>;
  /**
   * Rules every method gets, each method on its own resource (not one resource for all): declared
   * on a method's resource the first time it is called, beside its `methods` rules.
   * @defaultValue none
   */
  readonly eachMethod?: Rules;
}

/** Options of `serverInterceptor()`. */
export interface ServerInterceptorOptions extends GrpcOptions<ServerMethodRules> {
  /**
   * The request metadata key whose first value names the caller (its origin), for
   * origin-specific flow rules and authority rules; a call without it is from `''`. Metadata is
   * what the client sent: authority rules on it need an interceptor that authenticates the caller
   * first (listed before this one) or a proxy that sets it.
   * @defaultValue every caller is `''`
   */
  readonly origin?: string;
}

/** Options of `clientInterceptor()`. */
export interface ClientInterceptorOptions extends GrpcOptions<ClientMethodRules> {
  /**
   * The server the client calls, as its resources are named: `'<target><method path>'`
   * (`'localhost:50051/demo.Echo/Say'`). Usually the target the client was made with.
   */
  readonly target: string;
  /**
   * The longest server pushback honoured, in ms (within [0, 2^31 − 1]): the method's pushback
   * rule's `maxPauseMs`, and the longest pushback a retry waits for (a longer one is not retried).
   * 0 ignores pushbacks (no pause, no wait), except that a negative or malformed one still stops
   * retries.
   * @defaultValue 60000
   */
  readonly maxPushbackMs?: number;
  /** Retries of failed calls within each method's retry budget, or `false` for none. @defaultValue false */
  readonly retry?: GrpcRetryOptions | false;
  /**
   * Client-side adaptive throttling (Google SRE) on each method: calls are shed locally in
   * proportion to how many the server has been rejecting (failures and pushbacks). An adaptive
   * throttling rule without `resource`, or `false`.
   * @defaultValue false
   */
  readonly adaptiveThrottling?: Omit<AdaptiveThrottlingRuleOptions, 'resource'> | false;
}

/** A method's rules, validated, without their resource. */
export interface MethodRuleSet {
  readonly flow: readonly MethodRateLimitOptions[];
  readonly circuitBreakers: readonly MethodCircuitBreakerOptions[];
  readonly hotParams: readonly (Omit<HotParamRuleOptions, 'resource'> & { readonly paramKey: string })[];
}

/** The options both interceptors share, validated. */
export interface NormalizedGrpcOptions {
  readonly engine: Floodgate;
  /** `failure[code]`: whether a status code is a failure for circuit breakers. */
  readonly failure: readonly boolean[];
  readonly methods: ReadonlyMap<string, MethodRuleSet>;
  readonly eachMethod: MethodRuleSet | undefined;
  /** A call's priority, from its metadata and method path (`'default'` for every call without the option). */
  readonly priority: CallPriority;
}

/** How an interceptor resolves a call's priority, once per call. */
export type CallPriority = (metadata: Metadata, path: string) => Priority;

/** The server interceptor's options, validated. */
export interface NormalizedServerOptions extends NormalizedGrpcOptions {
  /** The metadata key of the origin, lower-cased; `undefined` when every caller is `''`. */
  readonly origin: string | undefined;
}

/** Retry options in force. */
export interface ResolvedGrpcRetry {
  readonly maxRetries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** `retryable[code]`: whether a status code is retried. */
  readonly retryable: readonly boolean[];
  readonly serverStreaming: boolean;
  readonly budget: Omit<RetryBudgetRuleOptions, 'resource'>;
}

/** The client interceptor's options, validated. */
export interface NormalizedClientOptions extends NormalizedGrpcOptions {
  readonly target: string;
  readonly maxPushbackMs: number;
  readonly retry: ResolvedGrpcRetry | undefined;
  readonly adaptiveThrottling: Omit<AdaptiveThrottlingRuleOptions, 'resource'> | undefined;
  /** The rules every method's resource gets from these options (pushback, retry budget, adaptive throttling). */
  readonly outboundRules: (resource: string) => RuleSetOptions;
}

/** The longest client `target`: with a method path, a resource name stays within the engine's bound. */
const MAX_TARGET_LENGTH = 512;
const METHOD_PATH = /^\/[^/\s]+\/[^/\s]+$/;
const METADATA_KEY = /^[0-9a-z_.-]{1,256}$/;
const SERVER_KEYS = ['floodgate', 'failureCodes', 'methods', 'eachMethod', 'priority', 'origin'];
const CLIENT_KEYS = [
  'floodgate',
  'failureCodes',
  'priority',
  'methods',
  'eachMethod',
  'target',
  'maxPushbackMs',
  'retry',
  'adaptiveThrottling',
];
const PRIORITY_KEYS = ['metadata', 'max'];
/** Every call is `'default'`: no `priority` option. */
const DEFAULT_PRIORITY: CallPriority = () => 'default';
const RETRY_KEYS = ['maxRetries', 'baseDelayMs', 'maxDelayMs', 'statusCodes', 'serverStreaming', 'budget'];
/** The kinds a method takes rules of, by their route option (`rateLimit` → `flow`), as the kinds name themselves. */
const SERVER_RULE_KEYS: RuleKeys = Object.freeze(
  Object.fromEntries(
    RULE_KIND_NAMES.flatMap(({ key, routeOption }) => (routeOption === undefined ? [] : [[routeOption, key]])),
  ) as RuleKeys,
);
/** The same on the client side, but hotspot rules: a client call has no parameters for them to read. */
const CLIENT_RULE_KEYS: RuleKeys = Object.freeze(
  Object.fromEntries(Object.entries(SERVER_RULE_KEYS).filter(([, key]) => key !== 'hotParams')),
);

/**
 * Validates `serverInterceptor()`'s options, naming every problem.
 * @throws RuleValidationError listing every bad option and rule field by path.
 */
export function normalizeServerOptions(input: unknown): NormalizedServerOptions {
  const issues: RuleIssue[] = [];
  const obj = optionsObject(input, SERVER_KEYS, issues);
  const shared = readShared(obj, SERVER_RULE_KEYS, 'default', issues);
  let origin: string | undefined;
  if (obj.origin !== undefined) origin = readMetadataKey(obj.origin, 'origin', issues);
  if (issues.length > 0) throw new RuleValidationError(issues, 'Invalid serverInterceptor() options');
  return { ...shared, origin };
}

/**
 * Validates `clientInterceptor()`'s options, naming every problem.
 * @throws RuleValidationError listing every bad option and rule field by path.
 */
export function normalizeClientOptions(input: unknown): NormalizedClientOptions {
  const issues: RuleIssue[] = [];
  const obj = optionsObject(input, CLIENT_KEYS, issues);
  const shared = readShared(obj, CLIENT_RULE_KEYS, 'critical', issues);
  const target = obj.target;
  if (typeof target !== 'string' || target.length === 0 || target.length > MAX_TARGET_LENGTH)
    issues.push({
      path: 'target',
      message: `must be a non-empty string of at most ${MAX_TARGET_LENGTH} characters (the server's address), got ${show(target)}`,
    });
  const maxPushbackMs = obj.maxPushbackMs ?? GRPC_DEFAULTS.maxPushbackMs;
  if (typeof maxPushbackMs !== 'number' || !(maxPushbackMs >= 0 && maxPushbackMs <= MAX_DURATION_MS))
    issues.push({
      path: 'maxPushbackMs',
      message: `must be a number within [0, ${MAX_DURATION_MS}], got ${show(maxPushbackMs)}`,
    });
  const retry = obj.retry === undefined || obj.retry === false ? undefined : readRetry(obj.retry, issues);
  const throttling = obj.adaptiveThrottling;
  let adaptiveThrottling: Omit<AdaptiveThrottlingRuleOptions, 'resource'> | undefined;
  if (throttling !== undefined && throttling !== false) {
    if (!isPlainObject(throttling))
      issues.push({ path: 'adaptiveThrottling', message: `must be an object or false, got ${show(throttling)}` });
    else if (readRule(throttling, 'adaptiveThrottling', 'adaptiveThrottling', issues) !== undefined)
      adaptiveThrottling = throttling;
  }
  if (issues.length > 0) throw new RuleValidationError(issues, 'Invalid clientInterceptor() options');
  const pauseMs = maxPushbackMs as number;
  const outboundRules = (resource: string): RuleSetOptions => ({
    ...(pauseMs > 0 ? { pushback: [{ resource, maxPauseMs: pauseMs }] } : {}),
    ...(retry !== undefined ? { retryBudgets: [{ ...retry.budget, resource }] } : {}),
    ...(adaptiveThrottling !== undefined ? { adaptiveThrottling: [{ ...adaptiveThrottling, resource }] } : {}),
  });
  return {
    ...shared,
    target: target as string,
    maxPushbackMs: pauseMs,
    retry,
    adaptiveThrottling,
    outboundRules,
  };
}

/** A metadata key, lower-cased (not a `-bin` one: the values read are words), or a problem at `path`. */
function readMetadataKey(input: unknown, path: string, issues: RuleIssue[]): string | undefined {
  const key = typeof input === 'string' ? input.toLowerCase() : undefined;
  if (key !== undefined && METADATA_KEY.test(key) && !key.endsWith('-bin')) return key;
  issues.push({ path, message: `must be a metadata key (not -bin), got ${show(input)}` });
  return undefined;
}

/**
 * The `priority` option: a function of the call, its answer checked on each call (core's
 * `givenPriority`), or `{ metadata, max }`, read as the HTTP adapters read a header (core's
 * `claimedPriority`), `max` defaulting to `defaultMax`.
 */
function readPriority(input: unknown, defaultMax: Priority, issues: RuleIssue[]): CallPriority {
  if (input === undefined) return DEFAULT_PRIORITY;
  if (typeof input === 'function') {
    const fn = input as (call: GrpcCallInfo) => Priority | undefined;
    return (metadata, path) => givenPriority(fn({ path, metadata }));
  }
  if (!isPlainObject(input)) {
    issues.push({
      path: 'priority',
      message: `must be a function of the call or { metadata, max }, got ${show(input)}`,
    });
    return DEFAULT_PRIORITY;
  }
  const before = issues.length;
  for (const key of Object.keys(input))
    if (!PRIORITY_KEYS.includes(key))
      issues.push({ path: `priority.${key}`, message: `is not a priority option; known: ${PRIORITY_KEYS.join(', ')}` });
  const key = readMetadataKey(input.metadata, 'priority.metadata', issues);
  const max = input.max ?? defaultMax;
  if (!isPriority(max))
    issues.push({ path: 'priority.max', message: `must be one of ${PRIORITIES.join(', ')}, got ${show(max)}` });
  if (issues.length > before || key === undefined || !isPriority(max)) return DEFAULT_PRIORITY;
  return (metadata) => claimedPriority(metadata.get(key), max);
}

/** The `retry` option, validated (its budget by the engine's own validation). */
function readRetry(input: unknown, issues: RuleIssue[]): ResolvedGrpcRetry | undefined {
  if (!isPlainObject(input)) {
    issues.push({ path: 'retry', message: `must be an object of retry options or false, got ${show(input)}` });
    return undefined;
  }
  for (const key of Object.keys(input))
    if (!RETRY_KEYS.includes(key))
      issues.push({ path: `retry.${key}`, message: `is not a retry option; known: ${RETRY_KEYS.join(', ')}` });
  const D = GRPC_DEFAULTS;
  const number = (key: string, max: number, integer: boolean, fallback: number): number => {
    const value = input[key] ?? fallback;
    if (typeof value === 'number' && value >= 0 && value <= max && (!integer || Number.isInteger(value))) return value;
    issues.push({
      path: `retry.${key}`,
      message: `must be ${integer ? 'an integer' : 'a number'} within [0, ${max}], got ${show(value)}`,
    });
    return fallback;
  };
  const retryable = codesOf(input.statusCodes ?? D.retryableCodes, 'retry.statusCodes', issues);
  const serverStreaming = input.serverStreaming ?? D.serverStreaming;
  if (typeof serverStreaming !== 'boolean')
    issues.push({ path: 'retry.serverStreaming', message: `must be a boolean, got ${show(serverStreaming)}` });
  const budget = input.budget ?? {};
  const budgetOk = isPlainObject(budget) && readRule(budget, 'retryBudgets', 'retry.budget', issues) !== undefined;
  if (!isPlainObject(budget))
    issues.push({ path: 'retry.budget', message: `must be an object of budget fields, got ${show(budget)}` });
  return {
    maxRetries: number('maxRetries', 4, true, D.maxRetries),
    baseDelayMs: number('baseDelayMs', MAX_DURATION_MS, false, D.baseDelayMs),
    maxDelayMs: number('maxDelayMs', MAX_DURATION_MS, false, D.maxDelayMs),
    retryable,
    serverStreaming: serverStreaming === true,
    budget: budgetOk ? budget : {},
  };
}

/** `codes` as a table by code (`table[code]`), each within [1, 16]; problems under `path`. */
function codesOf(codes: unknown, path: string, issues: RuleIssue[]): boolean[] {
  const table = new Array<boolean>(17).fill(false);
  if (!Array.isArray(codes)) issues.push({ path, message: `must be an array of status codes, got ${show(codes)}` });
  else
    codes.forEach((code: unknown, i) => {
      if (typeof code === 'number' && Number.isInteger(code) && code >= 1 && code <= 16) table[code] = true;
      else issues.push({ path: `${path}[${i}]`, message: `must be a status code within [1, 16], got ${show(code)}` });
    });
  return table;
}

/** The rules of one method, ready to declare on its resource. */
export function ruleSetFor(resource: string, rules: MethodRuleSet): RuleSetOptions {
  return {
    flow: rules.flow.map((rule) => ({ ...rule, resource })),
    circuitBreakers: rules.circuitBreakers.map((rule) => ({ ...rule, resource })),
    hotParams: rules.hotParams.map((rule) => ({ ...rule, resource })),
  };
}

/** Whether a method's rules hold any rule. */
export function hasRules(rules: MethodRuleSet): boolean {
  return rules.flow.length + rules.circuitBreakers.length + rules.hotParams.length > 0;
}

function optionsObject(input: unknown, known: readonly string[], issues: RuleIssue[]): Record<string, unknown> {
  if (input === undefined) return {};
  if (!isPlainObject(input)) {
    issues.push({ path: 'options', message: `must be an object, got ${show(input)}` });
    return {};
  }
  for (const key of Object.keys(input))
    if (!known.includes(key)) issues.push({ path: key, message: `is not an option; known: ${known.join(', ')}` });
  return input;
}

type RuleKeys = Readonly<Record<string, 'flow' | 'circuitBreakers' | 'hotParams'>>;

function readShared(
  obj: Record<string, unknown>,
  ruleKeys: RuleKeys,
  defaultMax: Priority,
  issues: RuleIssue[],
): NormalizedGrpcOptions {
  const engine = (obj.floodgate ?? sharedEngine) as Floodgate;
  if (typeof engine?.tryEntry !== 'function' || typeof engine?.declareRules !== 'function')
    issues.push({ path: 'floodgate', message: `must be a Floodgate engine, got ${show(obj.floodgate)}` });
  const failure = codesOf(obj.failureCodes ?? GRPC_DEFAULTS.failureCodes, 'failureCodes', issues);
  const methods = new Map<string, MethodRuleSet>();
  if (obj.methods !== undefined) {
    if (!isPlainObject(obj.methods))
      issues.push({ path: 'methods', message: `must be an object of rules by method path, got ${show(obj.methods)}` });
    else
      for (const [path, rules] of Object.entries(obj.methods)) {
        const at = `methods['${path}']`;
        if (!METHOD_PATH.test(path))
          issues.push({ path: at, message: "must be keyed by a method path, as '/package.Service/Method'" });
        const set = readMethodRules(rules, at, ruleKeys, issues);
        if (set !== undefined) methods.set(path, set);
      }
  }
  const eachMethod =
    obj.eachMethod === undefined ? undefined : readMethodRules(obj.eachMethod, 'eachMethod', ruleKeys, issues);
  const priority = readPriority(obj.priority, defaultMax, issues);
  return { engine, failure, methods, eachMethod, priority };
}

/**
 * A method's rules, each validated as the engine validates a rule (through `normalizeRuleSet`,
 * on a stand-in resource), its problems reported under `path` (`methods['/demo.Echo/Say'].rateLimit.threshold`).
 */
function readMethodRules(
  input: unknown,
  path: string,
  ruleKeys: RuleKeys,
  issues: RuleIssue[],
): MethodRuleSet | undefined {
  if (!isPlainObject(input)) {
    issues.push({
      path,
      message: `must be an object of rules (${Object.keys(ruleKeys).join(', ')}), got ${show(input)}`,
    });
    return undefined;
  }
  const set = { flow: [] as unknown[], circuitBreakers: [] as unknown[], hotParams: [] as unknown[] };
  for (const [option, value] of Object.entries(input)) {
    const kind = Object.hasOwn(ruleKeys, option) ? ruleKeys[option] : undefined;
    if (kind === undefined) {
      issues.push({
        path: `${path}.${option}`,
        message: `is not a rule option; known: ${Object.keys(ruleKeys).join(', ')}`,
      });
      continue;
    }
    const list = Array.isArray(value) ? value : [value];
    list.forEach((rule: unknown, i) => {
      const at = Array.isArray(value) ? `${path}.${option}[${i}]` : `${path}.${option}`;
      const read = readRule(rule, kind, at, issues);
      if (read !== undefined) set[kind].push(read);
    });
  }
  return set as MethodRuleSet;
}

/** One rule of a method, validated by the engine's own validation (problems renamed to `path`). */
function readRule(
  input: unknown,
  kind: keyof MethodRuleSet | 'retryBudgets' | 'adaptiveThrottling',
  path: string,
  issues: RuleIssue[],
): object | undefined {
  if (!isPlainObject(input)) {
    issues.push({ path, message: `must be a rule object, got ${show(input)}` });
    return undefined;
  }
  const own: RuleIssue[] = [];
  for (const field of ['resource', 'paramIndex', 'paramKey'])
    if (input[field] !== undefined && (field === 'resource' || kind === 'hotParams'))
      own.push({
        path: `${path}.${field}`,
        message: field === 'resource' ? 'is set by the method' : 'is set by param',
      });
  let rule: Record<string, unknown> = input;
  if (kind === 'hotParams') {
    const { param, ...rest } = input;
    if (!isParamSource(param))
      own.push({
        path: `${path}.param`,
        message: `must be 'metadata:<key>' (not a -bin key) or 'message:<field>[.<field>...]', got ${show(param)}`,
      });
    rule = { ...rest, paramKey: typeof param === 'string' ? param : 'metadata:none' };
  }
  try {
    normalizeRuleSet({ [kind]: [{ ...rule, resource: 'method' }] });
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error;
    const prefix = `${kind}[0]`;
    for (const issue of error.issues)
      own.push({ path: path + issue.path.slice(prefix.length), message: issue.message });
  }
  issues.push(...own);
  return own.length === 0 ? rule : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
