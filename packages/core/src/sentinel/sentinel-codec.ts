import type { AnyRule, RuleKindKey } from '../engine/kinds';
import { RESERVED_RULE_KEYS } from '../engine/rule-set-input';
import { join, MAX_DURATION_MS, show, type NumberBounds, type RuleReader } from '../kernel/rule-reader';
import { HOT_PARAM_RULE_DEFAULTS, type HotParamRule } from '../hot-param/hot-param-rule';
import { SYSTEM_RULE_DEFAULTS, type SystemRule } from '../system/system-rule';

/**
 * A kind of Sentinel rule, as Sentinel's data sources keep them: one list per kind, under its own
 * key or file. The names are Spring Cloud Alibaba's `rule-type`s (`flow`, `degrade`,
 * `param-flow`, `system`, `authority`, `gw-flow`, `gw-api-group`), with `isolation` for
 * sentinel-golang's concurrency rules. sentinel-golang's circuit breaker rules are `degrade`
 * and its hotspot rules `param-flow`.
 */
export type SentinelRuleType =
  'flow' | 'degrade' | 'param-flow' | 'system' | 'authority' | 'isolation' | 'gw-flow' | 'gw-api-group';

/** Every {@link SentinelRuleType}, in the order documents are read and written. */
export const SENTINEL_RULE_TYPES: readonly SentinelRuleType[] = Object.freeze([
  'flow',
  'isolation',
  'degrade',
  'param-flow',
  'system',
  'authority',
  'gw-flow',
  'gw-api-group',
]);

/**
 * Whose JSON: `'java'` for Sentinel (its rule classes as its file, Redis, Nacos... data sources
 * and its dashboard store them), `'go'` for sentinel-golang (its rule structs as its data
 * sources read them).
 */
export type SentinelDialect = 'java' | 'go';

/** One Sentinel rule as read: the Floodgate rule it is, and how Floodgate's fields are named in it. */
export interface ReadRule {
  /** The rule as Floodgate reads it: one element of the rule set's list for the type's kind. */
  readonly rule: Record<string, unknown>;
  /** The path of the Sentinel object `fields` name fields of (the rule, or a dashboard entity's `rule`). */
  readonly path: string;
  /**
   * Floodgate's field → Sentinel's (`{ threshold: 'count' }`; dotted for nested fields), so that
   * problems Floodgate's validation finds are reported at the Sentinel field. A field not listed
   * has the same name in both.
   */
  readonly fields: Readonly<Record<string, string>>;
  /** What the rule carries that Floodgate keeps no field for, for writing it back. */
  readonly carried?: Carried;
  /** The kind the rule reads into, when the type's codec reads into several (a gateway rule: `flow` or `hotParams`). */
  readonly kind?: RuleKindKey;
}

/** What a Sentinel rule carries that Floodgate's rule does not, kept for writing back. */
export interface Carried {
  /** A cluster rule's `clusterConfig.flowId` (Sentinel's token server knows the rule by it). */
  readonly flowId?: number;
  /** Each hotspot item's value type (Java `classType`, Go `valKind`), by the item's key. */
  readonly itemTypes?: Readonly<Record<string, string | number>>;
}

/** What writing one rule may ask of the rules read before, and of the rule set it is in. */
export interface WriteContext {
  /** The kind of the rule written. */
  readonly kind: RuleKindKey;
  /** Whether the rule set written holds an API group of this name (a gateway rule on it is in API mode). */
  apiGroup(name: string): boolean;
  /** The `flowId` for this cluster rule: the one it had when read, else one derived from it. */
  flowId(): number;
  /** The value type the item with this key had when read, if it was. */
  itemType(key: string): string | number | undefined;
}

/** How one Sentinel rule type reads into, and writes from, Floodgate rule kinds (usually one). */
export interface TypeCodec {
  /** The Floodgate kind its rules read into (unless a rule read says otherwise: {@link ReadRule.kind}). */
  readonly kind: RuleKindKey;
  /** Every kind it writes: `kind`, and any other its rules may read into. */
  readonly kinds: readonly RuleKindKey[];
  /**
   * Whether its list is written only when it holds rules or the rules read before held it (the
   * gateway types, which only gateways use), rather than whenever its kind is given.
   */
  readonly optional?: boolean;
  /** Whether a Floodgate rule of `kind` is written under this type (several types may share a kind). */
  writes(rule: AnyRule, kind: RuleKindKey): boolean;
  /**
   * Reads one Sentinel rule (an object, its `null` fields dropped). Problems go to `reader` at
   * Sentinel's paths; fields that keep their meaning are passed on for Floodgate's validation.
   */
  read(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule | undefined;
  /**
   * Writes one Floodgate rule in force as the Sentinel rules that mean it (usually one). What
   * Sentinel cannot express goes to `reader` at Floodgate's path.
   */
  write(rule: AnyRule, path: string, reader: RuleReader, context: WriteContext): readonly Record<string, unknown>[];
}

/**
 * A {@link TypeCodec} from its parts; `writes` says which rules of the kind it writes (all, by
 * default).
 */
export function typeCodec<R extends AnyRule>(
  kind: RuleKindKey,
  read: TypeCodec['read'],
  write: (rule: R, path: string, reader: RuleReader, context: WriteContext) => readonly Record<string, unknown>[],
  writes: (rule: R) => boolean = () => true,
): TypeCodec {
  return {
    kind,
    kinds: [kind],
    writes: (rule) => writes(rule as R),
    read,
    write: (rule, path, reader, context) => write(rule as R, path, reader, context),
  };
}

/** One dialect: a codec per rule type it stores, and why the others are refused. */
export interface DialectCodec {
  readonly types: Readonly<Partial<Record<SentinelRuleType, TypeCodec>>>;
  /** Why each type without a codec is refused. */
  readonly refused: Readonly<Partial<Record<SentinelRuleType, string>>>;
}

/** The fields a Sentinel dashboard entity adds to a rule (`FlowRuleEntity`...): kept by the dashboard, read by no client. */
export const ENTITY_FIELDS = ['id', 'app', 'ip', 'port', 'gmtCreate', 'gmtModified'] as const;

/** A JSON object with its `null` fields dropped: a Java or Go reader takes `null` as absent. */
export function sentinelObject(value: unknown, path: string, reader: RuleReader): Record<string, unknown> | undefined {
  const obj = reader.object(value, path);
  if (obj === undefined) return undefined;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    if (obj[key] !== null) Object.defineProperty(kept, key, { value: obj[key], enumerable: true, writable: true });
  }
  return kept;
}

/** One value of a Sentinel numeric constant: what it means to Floodgate, or why it is refused. */
export interface Constant<T> {
  readonly value: number;
  /** Sentinel's name for it (`'QPS'`, `'CHAIN'`). */
  readonly name: string;
  /** What it reads as; absent when Floodgate refuses it (`refused` says why). */
  readonly means?: T;
  readonly refused?: string;
}

/**
 * Reads a Sentinel numeric constant (`grade`, `controlBehavior`, `strategy`): its meaning, or
 * `undefined` with a problem when it is not one of `constants` or Floodgate refuses it.
 */
export function readConstant<T>(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  reader: RuleReader,
  constants: readonly Constant<T>[],
  fallback: number,
): T | undefined {
  const value = obj[key] ?? fallback;
  const found = constants.find((c) => c.value === value);
  if (found === undefined) {
    const allowed = constants.map((c) => `${c.value} (${c.name})`).join(', ');
    reader.fail(join(path, key), `must be one of ${allowed}, got ${show(value)}`);
    return undefined;
  }
  if (found.means === undefined) {
    reader.fail(join(path, key), `${found.value} (${found.name}) is not supported: ${found.refused ?? ''}`);
    return undefined;
  }
  return found.means;
}

/** The longest duration in whole seconds that fits {@link MAX_DURATION_MS}. */
export const MAX_DURATION_SECONDS = Math.floor(MAX_DURATION_MS / 1000);

/**
 * A duration Sentinel gives in whole seconds (`timeWindow`, `warmUpPeriodSec`, `durationInSec`),
 * in ms; `fallback` seconds when absent, required when `fallback` is `undefined`.
 */
export function seconds(
  obj: Record<string, unknown>,
  key: string,
  path: string,
  reader: RuleReader,
  fallback: number | undefined,
  max = MAX_DURATION_SECONDS,
): number | undefined {
  const bounds: NumberBounds = { min: 1, max, integer: true };
  const value =
    fallback === undefined ? reader.number(obj, key, path, bounds) : reader.number(obj, key, path, bounds, fallback);
  return Number.isSafeInteger(value) && value >= 1 && value <= max ? value * 1000 : undefined;
}

/** A field Sentinel ignores where it stands (`warmUpPeriodSec` on a rule that does not warm up): any value of its type loads. */
export function ignoredNumber(obj: Record<string, unknown>, key: string, path: string, reader: RuleReader): void {
  if (obj[key] !== undefined) reader.number(obj, key, path, {});
}

/** `regex`: absent or `false`; Floodgate's resources are exact names. */
export function notRegex(obj: Record<string, unknown>, path: string, reader: RuleReader): void {
  if (reader.boolean(obj, 'regex', path, false)) {
    reader.fail(
      join(path, 'regex'),
      'true is not supported: a Floodgate rule names one resource exactly (regex resources are not supported)',
    );
  }
}

/**
 * `limitApp` of a rule whose checker Sentinel runs for every caller (degrade, param-flow,
 * system): only what means "every caller" (absent, `""`, `"default"`) loads, so a rule never
 * seems scoped to a caller it is not.
 */
export function everyCaller(obj: Record<string, unknown>, what: string, path: string, reader: RuleReader): void {
  const value = obj.limitApp;
  if (value === undefined || value === '' || value === 'default') return;
  reader.fail(
    join(path, 'limitApp'),
    `must be "default" (or absent): Sentinel applies ${what} to every caller whatever its limitApp, got ${show(value)}`,
  );
}

/**
 * `ms` in whole seconds, for a Sentinel field that holds seconds; a problem at `path.field`
 * when it is not a whole number of seconds.
 */
export function toSeconds(ms: number, path: string, field: string, sentinelField: string, reader: RuleReader): number {
  if (ms % 1000 !== 0) {
    reader.fail(join(path, field), `must be whole seconds for Sentinel's ${sentinelField}, got ${ms}`);
  }
  return Math.round(ms / 1000);
}

/** A problem at `path.field` unless `value` is an integer (a Java `int` / Go integer field). */
export function wholeNumber(
  value: number,
  path: string,
  field: string,
  sentinelType: string,
  reader: RuleReader,
): void {
  if (!Number.isSafeInteger(value)) {
    reader.fail(join(path, field), `must be an integer for Sentinel (its field is ${sentinelType}), got ${value}`);
  }
}

/** A problem at `path.retryAfterMs` unless the system rule's retry hint is the default: Sentinel has none. */
export function defaultRetryHint(rule: SystemRule, path: string, dialect: string, reader: RuleReader): void {
  const D = SYSTEM_RULE_DEFAULTS.retryAfterMs;
  if (rule.retryAfterMs !== D) {
    reader.fail(join(path, 'retryAfterMs'), `must be ${D}: ${dialect} has no retry hint, got ${rule.retryAfterMs}`);
  }
}

/** The canonical decimal form of an integer (`+007` → `7`), or `undefined` when `text` is not one within [min, max]. */
export function integerKey(text: string, min: bigint, max: bigint): string | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= min && value <= max ? value.toString() : undefined;
}

/** A decimal number's canonical form (`1.50` → `1.5`, `1e3` → `1000`), or `undefined` when `text` is not a finite decimal. */
export function decimalKey(text: string): string | undefined {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? String(value) : undefined;
}

/** How one dialect spells a hotspot item, for {@link readItems}. */
export interface ItemSpec {
  /** Every field an item has. */
  readonly fields: readonly string[];
  /** The field holding the item's value as text (`object`, `valStr`). */
  readonly valueField: string;
  /** The field holding the item's threshold (`count`, `threshold`), and its bounds. */
  readonly countField: string;
  readonly countBounds: NumberBounds;
  /**
   * The item's value as Floodgate keys it (its string form) and its value type, or `undefined`
   * with the problem reported.
   */
  parse(
    item: Record<string, unknown>,
    at: string,
    reader: RuleReader,
  ): { key: string; type?: string | number } | undefined;
}

/**
 * A hotspot rule's item list (`paramFlowItemList`, Go's `specificItems`) as Floodgate's
 * `specificItems`, each item's value type kept by key; two items that are one value to
 * Floodgate (which compares parameter values by their string form) are refused.
 */
export function readItems(
  value: unknown,
  path: string,
  reader: RuleReader,
  spec: ItemSpec,
): { items: Record<string, number>; types: Record<string, string | number> } {
  const items: [string, number][] = [];
  const types: Record<string, string | number> = {};
  const seen = new Map<string, number>();
  reader.array(value ?? [], path).forEach((raw, i) => {
    const at = `${path}[${i}]`;
    const item = sentinelObject(raw, at, reader);
    if (item === undefined) return;
    reader.knownKeys(item, spec.fields, at);
    const count = reader.number(item, spec.countField, at, spec.countBounds);
    const parsed = spec.parse(item, at, reader);
    if (parsed === undefined) return;
    if (RESERVED_RULE_KEYS.includes(parsed.key)) {
      reader.fail(
        join(at, spec.valueField),
        `cannot be ${show(parsed.key)}: Floodgate refuses it as a key anywhere in a rule set (${RESERVED_RULE_KEYS.join(', ')})`,
      );
      return;
    }
    const earlier = seen.get(parsed.key);
    if (earlier !== undefined) {
      reader.fail(
        join(at, spec.valueField),
        `${show(item[spec.valueField])} is the same value as ${path}[${earlier}] to Floodgate, which compares parameter values by their string form (${show(parsed.key)})`,
      );
      return;
    }
    seen.set(parsed.key, i);
    items.push([parsed.key, count]);
    if (parsed.type !== undefined) types[parsed.key] = parsed.type;
  });
  return { items: Object.fromEntries(items), types };
}

/** Java's and Go's 64-bit integer range. */
export const INT64 = [-(2n ** 63n), 2n ** 63n - 1n] as const;

/** Whether `key` is a canonical integer within [min, max]. */
export function isIntegerKey(key: string, [min, max]: readonly [bigint, bigint]): boolean {
  return /^-?(0|[1-9]\d*)$/.test(key) && BigInt(key) >= min && BigInt(key) <= max;
}

/** Whether `key` is a finite number's canonical string form with a fraction or exponent (`1.5`, `1e+21`). */
export function isFractionKey(key: string): boolean {
  return /[.e]/.test(key) && decimalKey(key) === key;
}

/** Sentinel's `grade` of flow, param-flow and gateway rules: `RuleConstant.FLOW_GRADE_THREAD` and `FLOW_GRADE_QPS`. */
export const GRADES: readonly Constant<'qps' | 'concurrency'>[] = [
  { value: 0, name: 'THREAD', means: 'concurrency' },
  { value: 1, name: 'QPS', means: 'qps' },
];

const NO_HOTSPOT_WARM_UP = "Sentinel's hotspot rules do not warm up (they act as 0, DEFAULT); write 0 or 2";

/** `controlBehavior` of a rule Sentinel checks as a hotspot rule (param-flow rules, and gateway rules, which it converts to them). */
export const PARAM_BEHAVIORS: readonly Constant<HotParamRule['behavior']>[] = [
  { value: 0, name: 'DEFAULT', means: 'reject' },
  { value: 1, name: 'WARM_UP', refused: NO_HOTSPOT_WARM_UP },
  { value: 2, name: 'RATE_LIMITER', means: 'throttle' },
  { value: 3, name: 'WARM_UP_RATE_LIMITER', refused: NO_HOTSPOT_WARM_UP },
];

/** A problem at `path.capacity` unless a hotspot rule's value cache is the size Sentinel gives it (it sizes its own). */
export function sentinelCapacity(rule: HotParamRule, durationInSec: number, path: string, reader: RuleReader): void {
  const D = HOT_PARAM_RULE_DEFAULTS;
  const capacity =
    rule.metric === 'concurrency'
      ? D.concurrencyCapacity
      : Math.min(D.capacityPerSecond * durationInSec, D.maxDefaultCapacity);
  if (rule.capacity !== capacity) {
    reader.fail(
      join(path, 'capacity'),
      `must be ${capacity}: Sentinel sizes its value cache itself (min(4000 × durationInSec, 200000); 4000 for THREAD), got ${rule.capacity}`,
    );
  }
}

/**
 * How a rule Sentinel checks as a hotspot rule counts (param-flow rules, and gateway rules, which
 * it converts to them): `grade` as the metric, `controlBehavior` (0 only for THREAD), and a
 * `count` that must be whole (Sentinel truncates `what`).
 */
export function readHotspotCounting(
  obj: Record<string, unknown>,
  path: string,
  reader: RuleReader,
  what: string,
): { metric: 'qps' | 'concurrency' | undefined; behavior: HotParamRule['behavior'] | undefined } {
  const metric = readConstant(obj, 'grade', path, reader, GRADES, 1);
  let behavior = readConstant(obj, 'controlBehavior', path, reader, PARAM_BEHAVIORS, 0);
  if (metric === 'concurrency' && behavior !== 'reject' && behavior !== undefined) {
    reader.fail(
      join(path, 'controlBehavior'),
      'must be 0 (DEFAULT) for a THREAD-grade rule: Sentinel ignores it there (it rejects over the count)',
    );
    behavior = undefined;
  }
  if (typeof obj.count === 'number' && Number.isFinite(obj.count) && !Number.isInteger(obj.count)) {
    reader.fail(
      join(path, 'count'),
      `must be a whole number: Sentinel truncates ${what} (to ${Math.trunc(obj.count)}), got ${obj.count}`,
    );
  }
  return { metric, behavior };
}
