import { RuleValidationError, type Floodgate, type RuleIssue } from '@floodgate/core';
import {
  normalizeRuleSet,
  type AdaptiveThrottlingRuleOptions,
  type CircuitBreakerRuleOptions,
  type PushbackRuleOptions,
  type RetryBudgetRuleOptions,
  type RuleSetOptions,
} from '@floodgate/core/rules';
import { MAX_DURATION_MS, RoutePattern, show } from '@floodgate/core/http';

/** How calls to one dependency (a host, or a route of a host) are guarded. Every field is optional. */
export interface OutboundPolicy {
  /**
   * A circuit breaker on the resource: a circuit breaker rule without `resource`. Connection
   * errors, resets, timeouts and answers `isFailure` accepts count as failures; the response time
   * runs to the response headers (or the body's end, with `measure: 'body'`).
   * @defaultValue none
   */
  readonly circuitBreaker?: Omit<CircuitBreakerRuleOptions, 'resource'> | false;
  /**
   * A bulkhead: the most calls to the resource in flight at once, a flow rule with
   * `metric: 'concurrency'`. A call holds its slot until its response body is read to the end,
   * cancelled or garbage-collected. Calls over it are refused with `FlowBlockError`, or wait
   * in its `queue`.
   * @defaultValue no limit
   */
  readonly maxConcurrency?: number | false;
  /**
   * The bulkhead's bounded queue (needs `maxConcurrency`): calls over the limit wait, first in
   * first out, for a call in flight to end, and are refused with `FlowBlockError` when the queue
   * is full or their wait reaches its bound; or `false` for none.
   * @defaultValue false
   */
  readonly queue?: QueueOptions | false;
  /** Retries of failed calls, within the resource's retry budget, or `false` for none. @defaultValue see {@link RetryOptions} */
  readonly retry?: RetryOptions | false;
  /**
   * Upstream pushback: a 429 or 503 answer with `Retry-After` pauses every call to the resource
   * until then (capped at `maxPauseMs`), refused locally with `UpstreamPausedError`. A pushback
   * rule without `resource`, or `false` to send calls whatever the dependency asked.
   * @defaultValue `{ maxPauseMs: 60000 }`
   */
  readonly pushback?: Omit<PushbackRuleOptions, 'resource'> | false;
  /**
   * Client-side adaptive throttling (Google SRE): calls are shed locally in proportion to how many
   * the dependency has been rejecting (failures and pushbacks). An adaptive throttling rule
   * without `resource`, or `false`.
   * @defaultValue false
   */
  readonly adaptiveThrottling?: Omit<AdaptiveThrottlingRuleOptions, 'resource'> | false;
  /**
   * Hedging, for calls that may be retried (idempotent, replayable body): when the first attempt
   * has no response headers after a delay, a second one is sent; the first answer wins and the
   * other is aborted. Hedges spend the retry budget.
   * @defaultValue false
   */
  readonly hedge?: HedgeOptions | false;
  /**
   * The longest an attempt may wait for its response headers, in ms; then it is aborted with a
   * `TimeoutError` (a failure for breakers, and retried if it may be). Per call, also: the
   * request's own `signal` (`fetch(url, { signal: AbortSignal.timeout(ms) })`) bounds the whole
   * call, retries included.
   * @defaultValue no timeout
   */
  readonly timeoutMs?: number | false;
  /**
   * Whether an answer's status counts as a failure for circuit breakers and adaptive throttling.
   * @defaultValue `status >= 500`
   */
  readonly isFailure?: (status: number) => boolean;
  /**
   * Where a call's response time ends: at its response headers, or at the end of its body (then
   * an error while reading the body also counts as a failure).
   * @defaultValue 'headers'
   */
  readonly measure?: 'headers' | 'body';
}

/** Retries: exponential backoff with full jitter, `Retry-After` honoured, within the retry budget. */
export interface RetryOptions {
  /** Most retries of one call (after its first attempt). @defaultValue 2 */
  readonly maxRetries?: number;
  /**
   * The backoff before retry n (from 1) is drawn uniformly from [0, min(maxDelayMs,
   * baseDelayMs × 2^(n−1))] ms (AWS's "full jitter"), through the engine's clock and random source.
   * @defaultValue 50
   */
  readonly baseDelayMs?: number;
  /** The longest backoff, in ms. @defaultValue 2000 */
  readonly maxDelayMs?: number;
  /**
   * The longest `Retry-After` a retry waits for, in ms: an answer asking for more is not retried
   * (it is answered as it is; with pushback on, the resource pauses).
   * @defaultValue 10000
   */
  readonly maxRetryAfterMs?: number;
  /**
   * The methods retried: the idempotent ones. Other methods are retried when the request carries
   * an `Idempotency-Key` header (see `idempotencyKeyHeader`).
   * @defaultValue ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']
   */
  readonly methods?: readonly string[];
  /** The answers retried, by status. @defaultValue [429, 500, 502, 503, 504] */
  readonly statusCodes?: readonly number[];
  /**
   * A request header whose presence makes any method retryable (the IETF draft's
   * `Idempotency-Key`), or `false`.
   * @defaultValue 'idempotency-key'
   */
  readonly idempotencyKeyHeader?: string | false;
  /**
   * The resource's retry budget: a retry budget rule without `resource` (Finagle's defaults:
   * 20 % of first attempts over 10 s, plus 10 retries a second). Retries and hedges beyond it are
   * not sent: the call is answered with what its last attempt got.
   * @defaultValue `{}` (the defaults)
   */
  readonly budget?: Omit<RetryBudgetRuleOptions, 'resource'>;
}

/** A bulkhead's queue: the flow rule's `maxQueueLength` and `maxQueueingTimeMs`. */
export interface QueueOptions {
  /** How many calls may wait at once: a safe integer >= 0 (0: none wait). */
  readonly maxLength: number;
  /** The longest a call waits for a slot, in ms (its request's `signal` can end the wait sooner). @defaultValue 500 */
  readonly maxQueueingTimeMs?: number;
}

/** Hedging: a second attempt after a delay, fixed or a percentile of the resource's response times. */
export interface HedgeOptions {
  /**
   * Ms after which a second attempt is sent while the first has no response headers; with
   * `percentile`, the delay used until the resource has completed 20 calls.
   */
  readonly delayMs: number;
  /**
   * A percentile within (0, 1) of the resource's response times (from the engine's response-time
   * histogram, whose 1-2-5 bounds it rounds up to): the hedge is sent once the first attempt is
   * slower than that share of calls.
   * @defaultValue none: `delayMs` always
   */
  readonly percentile?: number;
}

/** A host's policy: its fields over the defaults, and the routes of it that get a resource of their own. */
export interface HostPolicy extends OutboundPolicy {
  /**
   * Route templates of this host, each its own resource (`'GET /users/:id'` is the resource
   * `GET api.example.com/users/:id`), with its policy's fields over the host's. Paths matching
   * none fold into the host's resource.
   */
  readonly routes?: Readonly<Record<string, OutboundPolicy>>;
}

/** Options of `floodgateInterceptor()`: the policy of every host (its fields), hosts' own, and the engine. */
export interface FloodgateInterceptorOptions extends OutboundPolicy {
  /** The engine that guards the calls. @defaultValue the shared `floodgate` engine */
  readonly floodgate?: Floodgate;
  /**
   * Hosts with a policy of their own, by host as resources name them (`'api.example.com'`,
   * `'localhost:8080'`): their fields over the defaults. Other hosts get the defaults.
   */
  readonly hosts?: Readonly<Record<string, HostPolicy>>;
  /**
   * Most hosts not listed in `hosts` that get a resource of their own. Calls to further hosts are
   * sent unguarded (a process warning says so once), so URLs from anywhere (webhooks) cannot make
   * resources without bound.
   * @defaultValue 1000
   */
  readonly maxHosts?: number;
}

/** Defaults of the outbound guard's options. */
export const OUTBOUND_DEFAULTS = Object.freeze({
  /** Two retries at most per call. */
  maxRetries: 2,
  /** Backoff before the first retry: up to 50 ms, doubling. */
  baseDelayMs: 50,
  /** Backoff never longer than 2 s. */
  maxDelayMs: 2000,
  /** A `Retry-After` up to 10 s is waited for; a longer one is not retried. */
  maxRetryAfterMs: 10_000,
  /** The idempotent methods (RFC 9110 §9.2.2, less TRACE). */
  methods: Object.freeze(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']),
  /** Too many requests, and the server errors worth another try. */
  statusCodes: Object.freeze([429, 500, 502, 503, 504]),
  /** The IETF draft's idempotency key header. */
  idempotencyKeyHeader: 'idempotency-key',
  /** Statuses from 500 up fail a call. */
  failureStatus: 500,
  /** Response time to the headers. */
  measure: 'headers',
  /** Hosts outside `hosts` with a resource of their own. */
  maxHosts: 1000,
  /** Completed calls a percentile hedge delay needs before it is read from the histogram. */
  hedgeSamples: 20,
} as const);

/** A policy in force: every field resolved. */
export interface ResolvedPolicy {
  readonly circuitBreaker: Omit<CircuitBreakerRuleOptions, 'resource'> | undefined;
  readonly maxConcurrency: number | undefined;
  readonly queue: QueueOptions | undefined;
  readonly retry: ResolvedRetry | undefined;
  readonly pushback: Omit<PushbackRuleOptions, 'resource'> | undefined;
  readonly adaptiveThrottling: Omit<AdaptiveThrottlingRuleOptions, 'resource'> | undefined;
  readonly hedge: HedgeOptions | undefined;
  readonly timeoutMs: number | undefined;
  readonly isFailure: (status: number) => boolean;
  readonly measure: 'headers' | 'body';
}

/** Retry options in force. */
export interface ResolvedRetry {
  readonly maxRetries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly methods: ReadonlySet<string>;
  readonly statusCodes: ReadonlySet<number>;
  readonly idempotencyKeyHeader: string | undefined;
  readonly budget: Omit<RetryBudgetRuleOptions, 'resource'>;
}

/** A host's resolved policy and its routes. */
export interface ResolvedHost {
  readonly policy: ResolvedPolicy;
  readonly routes: readonly ResolvedRoute[];
}

/** One listed route: its pattern and policy. */
export interface ResolvedRoute {
  readonly pattern: RoutePattern;
  readonly policy: ResolvedPolicy;
}

/** The options in force. */
export interface ResolvedOptions {
  readonly defaults: ResolvedPolicy;
  /** Listed hosts, by their resource name. */
  readonly hosts: ReadonlyMap<string, ResolvedHost>;
  readonly maxHosts: number;
}

const POLICY_KEYS = [
  'circuitBreaker',
  'maxConcurrency',
  'queue',
  'retry',
  'pushback',
  'adaptiveThrottling',
  'hedge',
  'timeoutMs',
  'isFailure',
  'measure',
] as const;
const RETRY_KEYS = [
  'maxRetries',
  'baseDelayMs',
  'maxDelayMs',
  'maxRetryAfterMs',
  'methods',
  'statusCodes',
  'idempotencyKeyHeader',
  'budget',
] as const;
const NO_POLICY: OutboundPolicy = Object.freeze({});
const DEFAULT_IS_FAILURE = (status: number): boolean => status >= OUTBOUND_DEFAULTS.failureStatus;

/** The rules a policy declares for `resource`, by kind. */
export function rulesOf(policy: ResolvedPolicy, resource: string): RuleSetOptions {
  return {
    ...(policy.circuitBreaker ? { circuitBreakers: [{ ...policy.circuitBreaker, resource }] } : {}),
    ...(policy.maxConcurrency !== undefined
      ? {
          flow: [
            {
              resource,
              metric: 'concurrency' as const,
              threshold: policy.maxConcurrency,
              ...(policy.queue === undefined
                ? {}
                : {
                    maxQueueLength: policy.queue.maxLength,
                    ...(policy.queue.maxQueueingTimeMs === undefined
                      ? {}
                      : { maxQueueingTimeMs: policy.queue.maxQueueingTimeMs }),
                  }),
            },
          ],
        }
      : {}),
    ...(policy.retry ? { retryBudgets: [{ ...policy.retry.budget, resource }] } : {}),
    ...(policy.pushback ? { pushback: [{ ...policy.pushback, resource }] } : {}),
    ...(policy.adaptiveThrottling ? { adaptiveThrottling: [{ ...policy.adaptiveThrottling, resource }] } : {}),
  };
}

/**
 * Validates the interceptor's options once and resolves them: every problem at once, by path
 * (`hosts["api.example.com"].retry.maxRetries`), rule fields by core's own validation.
 * @throws RuleValidationError listing every problem.
 */
export function resolveOptions(
  options: FloodgateInterceptorOptions,
  hostKey: (host: string) => string | undefined,
): ResolvedOptions {
  const issues: RuleIssue[] = [];
  const check = new Checks(issues);
  if (typeof options !== 'object' || options === null) {
    throw new RuleValidationError([{ path: 'options', message: 'must be an object' }], 'Invalid outbound options');
  }
  check.known(options, [...POLICY_KEYS, 'floodgate', 'hosts', 'maxHosts'], '');
  const defaults = resolvePolicy(options, undefined, '', check);
  const maxHosts = check.number(options.maxHosts, 'maxHosts', { min: 0, integer: true }) ?? OUTBOUND_DEFAULTS.maxHosts;
  const hosts = new Map<string, ResolvedHost>();
  const listed = options.hosts ?? {};
  if (typeof listed !== 'object' || listed === null) check.fail('hosts', 'must be an object of host policies');
  else {
    for (const [name, host] of Object.entries(listed)) {
      const path = `hosts[${JSON.stringify(name)}]`;
      const key = hostKey(name);
      if (key === undefined) {
        check.fail(path, `is not a host (as 'api.example.com' or 'localhost:8080')`);
        continue;
      }
      if (key !== name) check.fail(path, `must be written as resources name it: ${JSON.stringify(key)}`);
      if (typeof host !== 'object' || host === null) {
        check.fail(path, 'must be an object (a host policy)');
        continue;
      }
      check.known(host, [...POLICY_KEYS, 'routes'], path);
      const policy = resolvePolicy(host, defaults, path, check);
      const routes: ResolvedRoute[] = [];
      for (const [template, route] of Object.entries(host.routes ?? {})) {
        const routePath = `${path}.routes[${JSON.stringify(template)}]`;
        const problem = RoutePattern.problem(template);
        if (problem !== undefined) {
          check.fail(routePath, problem);
          continue;
        }
        if (typeof route !== 'object' || route === null) {
          check.fail(routePath, 'must be an object (a route policy)');
          continue;
        }
        check.known(route, POLICY_KEYS, routePath);
        routes.push({ pattern: new RoutePattern(template), policy: resolvePolicy(route, policy, routePath, check) });
      }
      hosts.set(key, { policy, routes });
    }
  }
  if (issues.length > 0) throw new RuleValidationError(issues, 'Invalid outbound options');
  return { defaults, hosts, maxHosts };
}

/** A policy's fields over `base` (the defaults when `base` is undefined), validated. */
function resolvePolicy(
  input: OutboundPolicy,
  base: ResolvedPolicy | undefined,
  path: string,
  check: Checks,
): ResolvedPolicy {
  const given = input ?? NO_POLICY;
  const at = (key: string): string => (path === '' ? key : `${path}.${key}`);
  const pick = <K extends keyof OutboundPolicy>(key: K): OutboundPolicy[K] | undefined =>
    given[key] !== undefined ? given[key] : undefined;
  const circuitBreaker = pick('circuitBreaker');
  const maxConcurrency = pick('maxConcurrency');
  const queue = pick('queue');
  const retry = pick('retry');
  const pushback = pick('pushback');
  const adaptiveThrottling = pick('adaptiveThrottling');
  const hedge = pick('hedge');
  const timeoutMs = pick('timeoutMs');
  const isFailure = pick('isFailure');
  const measure = pick('measure');
  if (isFailure !== undefined && typeof isFailure !== 'function') check.fail(at('isFailure'), 'must be a function');
  if (measure !== undefined && measure !== 'headers' && measure !== 'body')
    check.fail(at('measure'), `must be 'headers' or 'body', got ${JSON.stringify(measure)}`);
  const resolved: ResolvedPolicy = {
    circuitBreaker:
      circuitBreaker === undefined ? base?.circuitBreaker : circuitBreaker === false ? undefined : circuitBreaker,
    maxConcurrency:
      maxConcurrency === undefined
        ? base?.maxConcurrency
        : maxConcurrency === false
          ? undefined
          : check.number(maxConcurrency, at('maxConcurrency'), { min: 0, integer: true }),
    queue: queue === undefined ? base?.queue : queue === false ? undefined : resolveQueue(queue, at('queue'), check),
    retry:
      retry === undefined
        ? base === undefined
          ? resolveRetry({}, at('retry'), check)
          : base.retry
        : retry === false
          ? undefined
          : resolveRetry(retry, at('retry'), check),
    pushback: pushback === undefined ? (base === undefined ? {} : base.pushback) : pushback || undefined,
    adaptiveThrottling: adaptiveThrottling === undefined ? base?.adaptiveThrottling : adaptiveThrottling || undefined,
    hedge: hedge === undefined ? base?.hedge : hedge === false ? undefined : resolveHedge(hedge, at('hedge'), check),
    timeoutMs:
      timeoutMs === undefined
        ? base?.timeoutMs
        : timeoutMs === false
          ? undefined
          : check.number(timeoutMs, at('timeoutMs'), { above: 0, max: MAX_DURATION_MS }),
    isFailure: typeof isFailure === 'function' ? isFailure : (base?.isFailure ?? DEFAULT_IS_FAILURE),
    measure: measure === 'body' || measure === 'headers' ? measure : (base?.measure ?? OUTBOUND_DEFAULTS.measure),
  };
  if (resolved.queue !== undefined && resolved.maxConcurrency === undefined)
    check.fail(at('queue'), 'needs maxConcurrency (the limit its calls wait under)');
  // The rule fields are core's to validate: its messages, under this option's path.
  for (const [kind, rules] of Object.entries(rulesOf(resolved, 'r')) as [string, readonly object[]][]) {
    try {
      normalizeRuleSet({ [kind]: rules });
    } catch (error) {
      if (!(error instanceof RuleValidationError)) throw error;
      const field = FIELD_OF_KIND[kind]!;
      for (const issue of error.issues) {
        const queueField = QUEUE_FIELDS[issue.path.replace(/^[A-Za-z]+\[0\]\./, '')];
        const fieldPath =
          kind === 'flow' && queueField !== undefined ? queueField : issue.path.replace(/^[A-Za-z]+\[0\]/, field);
        check.fail(at(fieldPath), issue.message.replace('"r"', 'the resource'));
      }
    }
  }
  return resolved;
}

/** Which option field each kind's rule comes from, for paths. */
const FIELD_OF_KIND: Readonly<Record<string, string>> = {
  circuitBreakers: 'circuitBreaker',
  flow: 'maxConcurrency',
  retryBudgets: 'retry.budget',
  pushback: 'pushback',
  adaptiveThrottling: 'adaptiveThrottling',
};

/** The flow rule's queue fields, by the `queue` option's. */
const QUEUE_FIELDS: Readonly<Record<string, string>> = {
  maxQueueLength: 'queue.maxLength',
  maxQueueingTimeMs: 'queue.maxQueueingTimeMs',
};

/** A queue's fields, checked for shape: their values are core's to validate (as the flow rule's). */
function resolveQueue(input: QueueOptions, path: string, check: Checks): QueueOptions | undefined {
  if (typeof input !== 'object' || input === null) {
    check.fail(path, 'must be an object of queue options ({ maxLength, maxQueueingTimeMs }), or false');
    return undefined;
  }
  check.known(input, ['maxLength', 'maxQueueingTimeMs'], path);
  if (input.maxLength === undefined) {
    check.fail(`${path}.maxLength`, 'is required (a safe integer >= 0)');
    return undefined;
  }
  return {
    maxLength: input.maxLength,
    ...(input.maxQueueingTimeMs === undefined ? {} : { maxQueueingTimeMs: input.maxQueueingTimeMs }),
  };
}

function resolveRetry(input: RetryOptions, path: string, check: Checks): ResolvedRetry | undefined {
  if (typeof input !== 'object' || input === null) {
    check.fail(path, 'must be an object of retry options, or false');
    return undefined;
  }
  const D = OUTBOUND_DEFAULTS;
  check.known(input, RETRY_KEYS, path);
  const at = (key: string): string => `${path}.${key}`;
  const duration = { min: 0, max: MAX_DURATION_MS };
  const methods = check.list(input.methods, at('methods'), (m) => typeof m === 'string' && m.length > 0, 'a method');
  const statusCodes = check.list(
    input.statusCodes,
    at('statusCodes'),
    (s) => Number.isInteger(s) && (s as number) >= 100 && (s as number) <= 599,
    'a status within [100, 599]',
  );
  const header = input.idempotencyKeyHeader;
  if (header !== undefined && header !== false && (typeof header !== 'string' || header.length === 0))
    check.fail(at('idempotencyKeyHeader'), 'must be a header name or false');
  const budget = input.budget ?? {};
  if (typeof budget !== 'object' || budget === null) check.fail(at('budget'), 'must be an object of budget fields');
  return {
    maxRetries: check.number(input.maxRetries, at('maxRetries'), { min: 0, max: 100, integer: true }) ?? D.maxRetries,
    baseDelayMs: check.number(input.baseDelayMs, at('baseDelayMs'), duration) ?? D.baseDelayMs,
    maxDelayMs: check.number(input.maxDelayMs, at('maxDelayMs'), duration) ?? D.maxDelayMs,
    maxRetryAfterMs: check.number(input.maxRetryAfterMs, at('maxRetryAfterMs'), duration) ?? D.maxRetryAfterMs,
    methods: new Set((methods as readonly string[] | undefined)?.map((m) => m.toUpperCase()) ?? D.methods),
    statusCodes: new Set((statusCodes as readonly number[] | undefined) ?? D.statusCodes),
    idempotencyKeyHeader:
      header === false ? undefined : typeof header === 'string' ? header.toLowerCase() : D.idempotencyKeyHeader,
    budget: typeof budget === 'object' && budget !== null ? budget : {},
  };
}

function resolveHedge(input: HedgeOptions, path: string, check: Checks): HedgeOptions | undefined {
  if (typeof input !== 'object' || input === null) {
    check.fail(path, 'must be an object ({ delayMs, percentile? }) or false');
    return undefined;
  }
  check.known(input, ['delayMs', 'percentile'], path);
  const delayMs = check.number(input.delayMs, `${path}.delayMs`, { min: 0, max: MAX_DURATION_MS }, true) ?? 0;
  const percentile = check.number(input.percentile, `${path}.percentile`, { above: 0, below: 1 });
  return { delayMs, ...(percentile !== undefined ? { percentile } : {}) };
}

interface Bounds {
  readonly min?: number;
  readonly above?: number;
  readonly max?: number;
  readonly below?: number;
  readonly integer?: boolean;
}

/** Collects the problems of the options, each with its path and the value given. */
class Checks {
  constructor(private readonly issues: RuleIssue[]) {}

  fail(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  known(obj: object, keys: readonly string[], path: string): void {
    for (const key of Object.keys(obj))
      if (!keys.includes(key))
        this.fail(path === '' ? key : `${path}.${key}`, `unknown field (allowed: ${keys.join(', ')})`);
  }

  /** A number within `bounds`, `undefined` when absent (or bad: the problem is recorded). */
  number(value: unknown, path: string, bounds: Bounds, required = false): number | undefined {
    if (value === undefined) {
      if (required) this.fail(path, 'is required (a number)');
      return undefined;
    }
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!bounds.integer || Number.isSafeInteger(value)) &&
      (bounds.min === undefined || value >= bounds.min) &&
      (bounds.above === undefined || value > bounds.above) &&
      (bounds.max === undefined || value <= bounds.max) &&
      (bounds.below === undefined || value < bounds.below);
    if (ok) return value;
    const range = [
      bounds.min !== undefined ? `>= ${bounds.min}` : bounds.above !== undefined ? `> ${bounds.above}` : '',
      bounds.max !== undefined ? `<= ${bounds.max}` : bounds.below !== undefined ? `< ${bounds.below}` : '',
    ]
      .filter((part) => part !== '')
      .join(' and ');
    this.fail(
      path,
      `must be a ${bounds.integer ? 'safe integer' : 'finite number'}${range ? ` ${range}` : ''}, got ${show(value)}`,
    );
    return undefined;
  }

  /** A non-empty array each of whose items passes `ok`; `undefined` when absent or bad. */
  list(value: unknown, path: string, ok: (item: unknown) => boolean, what: string): readonly unknown[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.fail(path, `must be an array, got ${show(value)}`);
      return undefined;
    }
    let good = true;
    value.forEach((item, i) => {
      if (ok(item)) return;
      good = false;
      this.fail(`${path}[${i}]`, `must be ${what}, got ${JSON.stringify(item)}`);
    });
    return good ? value : undefined;
  }
}
