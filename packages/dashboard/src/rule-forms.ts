import { normalizeRuleSet, type RolloutOptions, type RuleSetOptions } from '@floodgate/core/rules';

/*
 * The forms of the page, one per rule kind: every field a kind's rules take, how the page shows
 * it, and the default the engine gives it when it is left out (read from the engine's own
 * validation, never written here). The one place the dashboard describes rule fields: the page
 * builds each form from what this module serves (`rule-forms.json`), and a kind it has no form
 * for is edited as the JSON of one rule.
 */

/**
 * How a field is shown and read back: `resource` (text, with the resources the engine has seen
 * to pick from), `text`, `number` (sent as a number when it reads as one, else as typed, for the
 * engine to name the problem), `select` (one of `options`), `boolean` (a checkbox: `true` or
 * absent), `list` (one item a line; a line that starts with `{` is read as JSON), `json` (any JSON
 * value; text that is not JSON is sent as a string).
 */
export type RuleFieldType = 'resource' | 'text' | 'number' | 'select' | 'boolean' | 'list' | 'json';

/** One field of a rule form, as the page receives it. */
export interface RuleField {
  /** The field's path in the rule (`threshold`, `key.match.pattern`): where its value goes and where its problems come from. */
  readonly name: string;
  readonly type: RuleFieldType;
  /** What the field does, in a few words. */
  readonly help: string;
  /** A `select`'s values. */
  readonly options?: readonly string[];
  /** The rule needs it (wherever the field is shown). */
  readonly required?: boolean;
  /** The engine's default, as the value left out resolves to (an empty field takes it). */
  readonly default?: unknown;
  /** What an empty field shows: the default, or how it is worked out. */
  readonly placeholder?: string;
  /**
   * Shown (and sent) only while each field named holds one of the values listed (an empty field
   * holding its default; `''` for an empty field without one).
   */
  readonly when?: Readonly<Record<string, readonly string[]>>;
}

/** A kind's form: its fields, in the order shown. */
export interface RuleForm {
  readonly fields: readonly RuleField[];
}

/** The dotted paths into a rule's options: `'threshold'`, `'key.match.pattern'` (arrays are one field). */
type FieldPath<T> = {
  [K in keyof T & string]-?: NonNullable<T[K]> extends readonly unknown[]
    ? K
    : NonNullable<T[K]> extends object
      ? K | `${K}.${FieldPath<NonNullable<T[K]>>}`
      : K;
}[keyof T & string];

/** A field as written here: its default is found by validating `example` with `defaultIn` added. */
interface FieldSource<O> {
  readonly name: FieldPath<O>;
  readonly type: RuleFieldType;
  readonly help: string;
  readonly options?: readonly string[];
  readonly required?: true;
  /**
   * The field has a default: what the kind's example needs besides (`{}` for nothing) to make a
   * valid rule that uses the field, which the engine then resolves without it.
   */
  readonly defaultIn?: Readonly<Record<string, unknown>>;
  /** Shown instead of the default, where a sentence says more (a default worked out from other fields). */
  readonly placeholder?: string;
  readonly when?: Partial<Record<FieldPath<O>, readonly string[]>>;
}

/** A kind's form as written here: a valid rule of the kind, and its fields. */
interface FormSource<O> {
  readonly example: O;
  readonly fields: readonly FieldSource<O>[];
}

type Sources = { readonly [K in keyof RuleSetOptions]?: FormSource<NonNullable<RuleSetOptions[K]>[number]> };

const FLOW_BEHAVIORS = ['reject', 'warmUp', 'throttle', 'warmUpThrottle', 'adaptive'];
const WARM = ['warmUp', 'warmUpThrottle'];
const QUEUED = ['throttle', 'warmUpThrottle'];
const KEY_SOURCES = ['ip', 'host', 'header', 'query', 'cookie', 'param', 'user'];
const NAMED_KEY_SOURCES = ['header', 'query', 'cookie', 'param', 'user'];
const MATCHES = ['exact', 'prefix', 'contains', 'regex'];
const SYSTEM_LIMITS = [
  ['maxQps', 'cap: inbound calls passed per second, all resources together'],
  ['maxConcurrency', 'cap: inbound calls in flight, all resources together'],
  ['maxAvgRtMs', 'cap: average response time of inbound calls in the last second, in ms'],
  ['maxHeapUsedBytes', 'cap: V8 heap in use, in bytes'],
  ['maxRssBytes', "cap: the process's resident set size, in bytes"],
  ['maxEventLoopDelayMs', 'load limit: recent event-loop delay (p99), in ms'],
  ['maxEventLoopUtilization', 'load limit: share of time the event loop is busy, 0 to 1'],
  ['maxCpuUsage', "load limit: the process's CPU, as a share of one core, 0 to 1"],
] as const;

/**
 * The rollout fields the rules of every kind that checks calls take (the engine says which): a
 * rule shipped in shadow, then enforced by steps. Their defaults are not resolved into a rule in force
 * (an enforced rule reads as it did before rollout existed), so the placeholders say them.
 */
const ROLLOUT: readonly FieldSource<RolloutOptions>[] = [
  {
    name: 'mode',
    type: 'select',
    options: ['enforce', 'shadow'],
    placeholder: 'enforce',
    help: 'shadow: checked and counted as if enforced, refuses nothing, reports each call it would refuse (wouldBlock)',
  },
  {
    name: 'enforcePercent',
    type: 'number',
    placeholder: '100',
    when: { mode: ['', 'enforce'] },
    help: 'the share of what it would refuse that it refuses, 0 to 100 (the rest pass, reported as wouldBlock); not with cluster',
  },
];

const SOURCES: Sources = {
  authority: {
    example: { resource: 'r', origins: ['a'] },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource' },
      {
        name: 'strategy',
        type: 'select',
        options: ['allow', 'deny'],
        defaultIn: {},
        help: 'allow: only the origins listed pass; deny: they are refused',
      },
      { name: 'origins', type: 'list', required: true, help: 'the origins, one a line (exact match)' },
    ],
  },
  system: {
    example: { maxQps: 1 },
    fields: [
      ...SYSTEM_LIMITS.map(([name, help]) => ({ name, type: 'number' as const, help })),
      { name: 'retryAfterMs', type: 'number', defaultIn: {}, help: 'the retry hint of a refusal (Retry-After), in ms' },
      {
        name: 'priorityFactors',
        type: 'json',
        help: 'each limit scaled by priority, as JSON: {"sheddable": 0.8, "critical": 1.1} (the defaults)',
      },
    ],
  },
  hotParams: {
    example: { resource: 'r', key: { from: 'ip' }, threshold: 1 },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource' },
      {
        name: 'key.from',
        type: 'select',
        options: KEY_SOURCES,
        help: 'what of an HTTP request to count by (or, empty, an argument below)',
      },
      {
        name: 'key.name',
        type: 'text',
        when: { 'key.from': NAMED_KEY_SOURCES },
        help: "the header, query parameter, cookie or route parameter name; for user, a property path ('org.id')",
      },
      {
        name: 'key.ipv6Subnet',
        type: 'json',
        defaultIn: {},
        when: { 'key.from': ['ip'] },
        help: 'the prefix length IPv6 clients are grouped by (1 to 128), or false for each address',
      },
      {
        name: 'key.match.strategy',
        type: 'select',
        options: MATCHES,
        when: { 'key.from': KEY_SOURCES },
        help: 'count only the values that match (empty: every value)',
      },
      {
        name: 'key.match.pattern',
        type: 'text',
        when: { 'key.from': KEY_SOURCES, 'key.match.strategy': MATCHES },
        help: 'the text compared, or a regular expression matching the whole value',
      },
      {
        name: 'paramIndex',
        type: 'number',
        when: { 'key.from': [''] },
        help: "the argument's index in the entry's args (negative: from the end)",
      },
      { name: 'paramKey', type: 'text', when: { 'key.from': [''] }, help: "the name in the entry's params" },
      {
        name: 'metric',
        type: 'select',
        options: ['qps', 'concurrency'],
        defaultIn: {},
        help: 'calls per durationMs, or calls in flight, per value',
      },
      { name: 'threshold', type: 'number', required: true, help: 'calls per value (an integer; 0 blocks every value)' },
      {
        name: 'behavior',
        type: 'select',
        options: ['reject', 'throttle'],
        defaultIn: {},
        help: 'reject: a token bucket per value; throttle: each value paced (qps only)',
      },
      {
        name: 'durationMs',
        type: 'number',
        defaultIn: {},
        when: { metric: ['qps'] },
        help: 'the period threshold counts over, in ms',
      },
      {
        name: 'burstCount',
        type: 'number',
        defaultIn: {},
        when: { metric: ['qps'], behavior: ['reject'] },
        help: 'extra tokens a value may burst with',
      },
      {
        name: 'maxQueueingTimeMs',
        type: 'number',
        defaultIn: { behavior: 'throttle' },
        when: { metric: ['qps'], behavior: ['throttle'] },
        help: 'longest wait of a paced call in enter(), in ms',
      },
      {
        name: 'capacity',
        type: 'number',
        placeholder: 'min(4000 × seconds of durationMs, 200000); 4000 for concurrency',
        help: 'most values tracked at once (least recently used forgotten)',
      },
      {
        name: 'specificItems',
        type: 'json',
        defaultIn: {},
        help: 'thresholds for chosen values, as JSON: {"vip": 50, "abuser": 0}',
      },
      {
        name: 'cluster',
        type: 'json',
        help: 'cluster settings, as JSON: {"thresholdType": "global"} (needs a cluster backend)',
      },
    ],
  },
  flow: {
    example: { resource: 'r', threshold: 1 },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource' },
      {
        name: 'metric',
        type: 'select',
        options: ['qps', 'concurrency'],
        defaultIn: {},
        help: 'calls per second, or calls in flight',
      },
      {
        name: 'threshold',
        type: 'number',
        required: true,
        help: 'calls per second or in flight (0 blocks every call)',
      },
      {
        name: 'behavior',
        type: 'select',
        options: FLOW_BEHAVIORS,
        defaultIn: {},
        help: 'reject over the threshold, warm up from cold, pace (throttle), or adapt to latency (concurrency)',
      },
      {
        name: 'warmUpPeriodMs',
        type: 'number',
        when: { behavior: WARM },
        help: 'time from cold to the full rate, in ms (required to warm up)',
      },
      {
        name: 'coldFactor',
        type: 'number',
        defaultIn: { behavior: 'warmUp', warmUpPeriodMs: 1000 },
        when: { behavior: WARM },
        help: 'a cold system admits about threshold / coldFactor',
      },
      {
        name: 'maxQueueingTimeMs',
        type: 'number',
        defaultIn: { behavior: 'throttle' },
        when: { behavior: [...QUEUED, 'reject'] },
        help: 'longest wait of enter() and run(), in ms: in the pacing queue (throttle), or in the queue of a concurrency rule with maxQueueLength',
      },
      {
        name: 'maxQueueLength',
        type: 'number',
        placeholder: '0: no queue',
        when: { metric: ['concurrency'], behavior: ['reject'] },
        help: 'concurrency rules: how many calls of enter() and run() may wait for a call in flight to end (0: none)',
      },
      {
        name: 'minLimit',
        type: 'number',
        defaultIn: { metric: 'concurrency', behavior: 'adaptive', threshold: 10 },
        when: { behavior: ['adaptive'] },
        help: 'the least the adaptive limit shrinks to',
      },
      {
        name: 'maxLimit',
        type: 'number',
        defaultIn: { metric: 'concurrency', behavior: 'adaptive', threshold: 10 },
        when: { behavior: ['adaptive'] },
        help: 'the most the adaptive limit grows to',
      },
      {
        name: 'strategy',
        type: 'select',
        options: ['direct', 'relate'],
        defaultIn: {},
        help: "whose traffic is counted: the resource's own, or refResource's",
      },
      {
        name: 'refResource',
        type: 'resource',
        when: { strategy: ['relate'] },
        help: 'the resource whose traffic is counted (required to relate)',
      },
      {
        name: 'limitOrigin',
        type: 'text',
        defaultIn: {},
        help: "the callers it applies to: 'default' (all together), an origin, or 'other'",
      },
      {
        name: 'cluster',
        type: 'json',
        help: 'cluster settings, as JSON: {"thresholdType": "global"} (needs a cluster backend)',
      },
      {
        name: 'priorityFactors',
        type: 'json',
        when: { behavior: ['adaptive'] },
        help: 'the adaptive limit scaled by priority, as JSON: {"sheddable": 0.8, "critical": 1.1} (the defaults)',
      },
      {
        name: 'partitions',
        type: 'json',
        when: { metric: ['concurrency'] },
        help: 'guaranteed shares by priority (reject only), as JSON: {"critical": 0.5, "default": 0.3, "sheddable": 0.2}',
      },
      // occupyTimeoutMs has no field: a form cannot show a field only while a checkbox is ticked,
      // and shown always it would be sent without `prioritized` (a load error).
      {
        name: 'prioritized',
        type: 'boolean',
        help: 'qps reject rules: critical calls borrow from the next window, waiting up to 500 ms; concurrency rules with a queue: waiters served by priority',
      },
    ],
  },
  circuitBreakers: {
    example: { resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource' },
      {
        name: 'strategy',
        type: 'select',
        options: ['slowRequestRatio', 'errorRatio', 'errorCount'],
        required: true,
        help: 'what trips it: the ratio of slow calls, of failed calls, or the count of failed calls',
      },
      {
        name: 'threshold',
        type: 'number',
        required: true,
        help: 'a ratio (0 to 1), or a count of errors; it trips when the window is over it',
      },
      {
        name: 'maxAllowedRtMs',
        type: 'number',
        when: { strategy: ['slowRequestRatio'] },
        help: 'a call slower than this is slow, in ms (required for slowRequestRatio)',
      },
      { name: 'retryTimeoutMs', type: 'number', required: true, help: 'how long it stays open before probing, in ms' },
      {
        name: 'minRequestAmount',
        type: 'number',
        defaultIn: {},
        help: 'no trip while the window holds fewer calls',
      },
      { name: 'statIntervalMs', type: 'number', defaultIn: {}, help: "the breaker's window, in ms" },
      { name: 'bucketCount', type: 'number', defaultIn: {}, help: 'buckets in the window (1: tumbling)' },
      {
        name: 'halfOpenProbes',
        type: 'number',
        defaultIn: {},
        help: 'calls let through as probes when half-open',
      },
      { name: 'cluster', type: 'boolean', help: 'one breaker shared by every instance (needs a cluster backend)' },
    ],
  },
  pushback: {
    example: { resource: 'r' },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource (an upstream host, a route)' },
      {
        name: 'maxPauseMs',
        type: 'number',
        defaultIn: {},
        help: 'the longest pause one answer (429 or 503 with Retry-After) can impose, in ms',
      },
    ],
  },
  adaptiveThrottling: {
    example: { resource: 'r' },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource (an upstream host, a route)' },
      {
        name: 'k',
        type: 'number',
        defaultIn: {},
        help: 'requests sent per accepted one before any is refused (at least 1; lower sheds sooner)',
      },
      {
        name: 'windowMs',
        type: 'number',
        defaultIn: {},
        help: 'the window requests and accepts are counted over, in ms',
      },
    ],
  },
  retryBudgets: {
    example: { resource: 'r' },
    fields: [
      { name: 'resource', type: 'resource', required: true, help: 'the guarded resource (an upstream host, a route)' },
      {
        name: 'retryRatio',
        type: 'number',
        defaultIn: {},
        help: 'retries (and hedges) allowed per first attempt in the window, 0 to 1000',
      },
      { name: 'ttlMs', type: 'number', defaultIn: {}, help: 'how long an attempt counts, in ms (1000 to 60000)' },
      {
        name: 'minRetriesPerSecond',
        type: 'number',
        defaultIn: {},
        help: 'retries allowed per second whatever the traffic',
      },
    ],
  },
  apiGroups: {
    example: { name: 'g', patterns: ['GET /'] },
    fields: [
      { name: 'name', type: 'text', required: true, help: "the group's resource name: rules on it limit the group" },
      {
        name: 'patterns',
        type: 'list',
        required: true,
        help: 'one a line: a route pattern (POST /cart/*), or {"method": "GET", "regex": "/api/v[0-9]+/orders"}',
      },
    ],
  },
};

/**
 * The forms of the kinds given (the engine's, by key), each field's default resolved by the
 * engine's own validation; kinds without a form here are left out (the page edits them as JSON).
 * @throws Error when a field's default cannot be resolved (this module is wrong, not the caller).
 */
export function ruleForms(kinds: readonly string[]): Readonly<Record<string, RuleForm>> {
  const forms: Record<string, RuleForm> = {};
  for (const kind of kinds) {
    if (!Object.hasOwn(SOURCES, kind)) continue;
    const source = SOURCES[kind as keyof Sources] as unknown as FormSource<Record<string, unknown>>;
    const rollout = takesRollout(kind, source.example) ? (ROLLOUT as unknown as typeof source.fields) : [];
    forms[kind] = { fields: [...source.fields, ...rollout].map((field) => resolve(kind, source.example, field)) };
  }
  return forms;
}

/** Whether the engine takes the rollout fields on rules of `kind` (every kind but API groups). */
function takesRollout(kind: string, example: object): boolean {
  try {
    normalizeRuleSet({ [kind]: [{ ...example, mode: 'shadow' }] });
    return true;
  } catch {
    return false;
  }
}

function resolve(kind: string, example: object, field: FieldSource<Record<string, unknown>>): RuleField {
  const { defaultIn, ...shown } = field;
  if (defaultIn === undefined) return shown as RuleField;
  const rule = normalizeRuleSet({ [kind]: [{ ...example, ...defaultIn }] })[kind as keyof RuleSetOptions]![0];
  const value = field.name.split('.').reduce<unknown>((at, part) => (at as Record<string, unknown>)?.[part], rule);
  if (value === undefined) throw new Error(`rule-forms: ${kind}.${field.name} resolves to no default`);
  return {
    ...shown,
    default: value,
    placeholder: field.placeholder ?? (typeof value === 'string' ? value : JSON.stringify(value)),
  } as RuleField;
}
