import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import { BlockError, type BlockErrorOptions, type QuotaPolicy, type Refusal } from '../kernel/errors';
import { readPriorityFactors, type PriorityFactors, type PriorityFactorsOptions } from '../kernel/priority';
import { MAX_DURATION_MS, type NumberBounds, type RuleReader } from '../kernel/rule-reader';

/**
 * A system rule as written by users (JSON-serialisable): limits on the whole process, checked on
 * every inbound call (HTTP requests, NestJS handlers, `entry(resource, { inbound: true })`),
 * whatever its resource. Every limit is optional; give any subset, at least one. The
 * load limits (event-loop delay and utilisation, CPU) refuse a call only while the signal is
 * over its limit and the BBR check fails; the caps (concurrency, QPS, average response time,
 * memory) refuse directly. Sentinel's `SystemRule`, with Node's signals for its load ones.
 */
export interface SystemRuleOptions extends RolloutOptions {
  /** Load limit: the recent event-loop delay (p99 over the probe's window), in ms. */
  readonly maxEventLoopDelayMs?: number;
  /** Load limit: the share of time the event loop is busy, 0–1. */
  readonly maxEventLoopUtilization?: number;
  /** Load limit: the process's CPU over the probe's window, as a share of one core, 0–1. */
  readonly maxCpuUsage?: number;
  /** Cap: V8 heap in use, in bytes. */
  readonly maxHeapUsedBytes?: number;
  /** Cap: the process's resident set size, in bytes. */
  readonly maxRssBytes?: number;
  /** Cap: inbound calls in flight, all resources together. */
  readonly maxConcurrency?: number;
  /** Cap: inbound calls passed per second, all resources together; at most 2^53 − 1 (`MAX_COUNT`). */
  readonly maxQps?: number;
  /** Cap: the average response time of inbound calls completed in the last second, in ms. */
  readonly maxAvgRtMs?: number;
  /**
   * The retry hint of a refused call (`Retry-After` over HTTP), in ms; a `maxQps` refusal tells
   * the exact wait instead.
   * @defaultValue 1000
   */
  readonly retryAfterMs?: number;
  /**
   * How each limit is scaled by the call's priority: a `'sheddable'` call is refused from
   * `sheddable × limit` (80 % by default), a `'default'` call from the limit, a `'critical'` one
   * from `critical × limit` (110 %). For a load limit the BBR check must fail as well, whatever
   * the priority. Given on one rule, the factors apply to the limits that rule sets.
   * @defaultValue `{ sheddable: 0.8, critical: 1.1 }`
   */
  readonly priorityFactors?: PriorityFactorsOptions;
}

/**
 * A system rule in force: the limits it sets (the others absent), its retry hint resolved, and
 * its priority factors when given (absent: the defaults, 0.8 and 1.1).
 */
export interface SystemRule
  extends Omit<SystemRuleOptions, 'retryAfterMs' | 'priorityFactors' | keyof RolloutOptions>, RuleRollout {
  /** The retry hint of a refusal, in ms. */
  readonly retryAfterMs: number;
  /** The priority factors, resolved; absent when the rule did not give them (the defaults apply). */
  readonly priorityFactors?: PriorityFactors;
}

/** The limits of a system rule, by field name: what a {@link SystemBlockError} names as `limit`. */
export type SystemLimit = SystemBlockError['limit'];

/** Defaults of a system rule's optional fields. */
export const SYSTEM_RULE_DEFAULTS = Object.freeze({
  /** A second: the signals are sampled every 500 ms and the windows span 1 s. */
  retryAfterMs: 1000,
} as const);

/**
 * Each limit with its bounds, in the order they are checked: Sentinel's `checkSystem` order
 * (QPS, threads, RT, then load and CPU with BBR), with memory among the caps.
 */
export const SYSTEM_LIMITS: readonly (readonly [SystemLimit, NumberBounds])[] = Object.freeze([
  ['maxQps', { min: 0 }],
  ['maxConcurrency', { min: 0, integer: true }],
  ['maxAvgRtMs', { min: 0, max: MAX_DURATION_MS }],
  ['maxHeapUsedBytes', { min: 0, integer: true }],
  ['maxRssBytes', { min: 0, integer: true }],
  ['maxEventLoopDelayMs', { min: 0, max: MAX_DURATION_MS }],
  ['maxEventLoopUtilization', { min: 0, max: 1 }],
  ['maxCpuUsage', { min: 0, max: 1 }],
] as const);

const FIELDS = [...SYSTEM_LIMITS.map(([name]) => name), 'retryAfterMs', 'priorityFactors'];

/** The system protection kind's name: its block errors' `kind`, its rule ids' prefix (`system#0`). */
export const SYSTEM_KIND_NAME = 'system' as const;

/**
 * System protection refused an inbound call: the process is over one of a system rule's limits.
 * Code `ERR_SYSTEM_BLOCKED`; 503 over HTTP. `limit` names the limit (`'maxCpuUsage'`, ...) and
 * `value` what was measured; `rule` is the rule that set that limit.
 */
export class SystemBlockError extends BlockError<SystemRule> {
  /** The limit that refused the call: a field of {@link SystemRuleOptions} (`'maxCpuUsage'`, ...). */
  readonly limit: Exclude<keyof SystemRuleOptions, 'retryAfterMs' | 'priorityFactors' | keyof RolloutOptions>;
  /** What was measured against it: the signal, or the inbound statistic. */
  readonly value: number;

  /**
   * @param options - what every block error carries, the limit that refused the call and what
   * it measured (the signal, or the inbound statistic, at the refusal).
   */
  constructor(
    options: BlockErrorOptions<SystemRule> & {
      readonly limit: Exclude<keyof SystemRuleOptions, 'retryAfterMs' | 'priorityFactors' | keyof RolloutOptions>;
      readonly value: number;
    },
  ) {
    super(options);
    this.limit = options.limit;
    this.value = options.value;
  }

  /** Always `'ERR_SYSTEM_BLOCKED'`. */
  get code(): 'ERR_SYSTEM_BLOCKED' {
    return 'ERR_SYSTEM_BLOCKED';
  }
  /** Always the kind's name (`SYSTEM_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return SYSTEM_KIND_NAME;
  }
  /** Always `'capacity'`: the process is overloaded (503 over HTTP). */
  get refusal(): Refusal {
    return 'capacity';
  }
  /** `'The service is temporarily overloaded.'` */
  get detail(): string {
    return 'The service is temporarily overloaded.';
  }
  /** Always `'SystemBlockError'`. */
  get name(): string {
    return 'SystemBlockError';
  }
  /** E.g. `System protection refused "GET /a": maxCpuUsage 0.8, measured 0.93`. */
  get message(): string {
    return `System protection refused "${this.resource}": ${this.limit} ${String(this.rule[this.limit])}, measured ${String(this.value)}`;
  }
  /** A `maxQps` refusal's quota: the inbound calls allowed per second (for the RateLimit headers). */
  override quota(): QuotaPolicy | undefined {
    return this.limit === 'maxQps'
      ? { name: 'system', quota: Math.floor(this.rule.maxQps!), windowSeconds: 1 }
      : undefined;
  }
  /** As every block error's, with `limit` and `value`. */
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), limit: this.limit, value: this.value };
  }
}

/**
 * Validates one system rule and resolves its defaults. Problems go to `reader`; the result is
 * only meaningful when none were found.
 */
export function normalizeSystemRule(input: unknown, path: string, reader: RuleReader): SystemRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const rule: Record<string, unknown> = {};
  for (const [name, bounds] of SYSTEM_LIMITS) {
    const value = reader.number(obj, name, path, bounds, undefined);
    if (value !== undefined) rule[name] = value;
  }
  if (rule.maxQps !== undefined) reader.countLimit(rule.maxQps as number, `${path}.maxQps`);
  if (!SYSTEM_LIMITS.some(([name]) => obj[name] !== undefined))
    reader.fail(path, `must set at least one limit (${SYSTEM_LIMITS.map(([name]) => name).join(', ')})`);
  rule.retryAfterMs = reader.number(
    obj,
    'retryAfterMs',
    path,
    { min: 0, max: MAX_DURATION_MS },
    SYSTEM_RULE_DEFAULTS.retryAfterMs,
  );
  if (obj.priorityFactors !== undefined) rule.priorityFactors = readPriorityFactors(obj, path, reader);
  return rule as unknown as SystemRule;
}
