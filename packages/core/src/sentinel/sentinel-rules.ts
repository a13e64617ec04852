import { createHash } from 'node:crypto';
import type { RuleRollout } from '../engine/rollout';
import { normalizeRuleSet } from '../engine/rule-set-input';
import { KINDS_BY_KEY, RULE_KINDS, type AnyRule, type RuleKindKey, type RuleSetOptions } from '../engine/kinds';
import type { RuleIssue } from '../kernel/errors';
import { RuleReader, show } from '../kernel/rule-reader';
import { GO_DIALECT } from './go-rules';
import { JAVA_DIALECT } from './java-rules';
import {
  SENTINEL_RULE_TYPES,
  sentinelObject,
  type Carried,
  type DialectCodec,
  type ReadRule,
  type SentinelDialect,
  type SentinelRuleType,
  type TypeCodec,
  type WriteContext,
} from './sentinel-codec';

export type { SentinelDialect, SentinelRuleType } from './sentinel-codec';

/** One Sentinel rule as JSON (a `FlowRule`, a `DegradeRule`, a sentinel-golang `flow.Rule`...). */
export type SentinelRule = Readonly<Record<string, unknown>>;

/**
 * Sentinel rules by type, each list as one of Sentinel's data sources keeps it under its own key
 * or file: `{ flow: [...], degrade: [...] }`. What {@link toSentinelRules} writes; what
 * {@link fromSentinelRules} reads, each list as parsed JSON or as its JSON text (checked whole
 * when read: `null` or an empty text reads as no rules, as an empty data source does in
 * Sentinel).
 */
export type SentinelRules = { [T in SentinelRuleType]?: SentinelRule[] };

/** Options of {@link fromSentinelRules} and {@link toSentinelRules}. */
export interface SentinelFormatOptions {
  /** Whose JSON: Sentinel's (Java) or sentinel-golang's. @defaultValue 'java' */
  readonly dialect?: SentinelDialect;
}

/** Options of {@link toSentinelRules}. */
export interface ToSentinelOptions extends SentinelFormatOptions {
  /**
   * The Sentinel rules last read from (or written to) where these go. A rule that reads as one
   * being written is written back exactly as it was (its `id`, dashboard fields and every field
   * Floodgate ignores kept); a new or changed rule keeps the `clusterConfig.flowId` and the item
   * value types (`classType`, `valKind`) of the rule it replaces (same resource, and same origin
   * or parameter). Rules here that do not read are not reused.
   */
  readonly previous?: { readonly [T in SentinelRuleType]?: unknown };
}

const DIALECTS: Readonly<Record<SentinelDialect, DialectCodec>> = { java: JAVA_DIALECT, go: GO_DIALECT };
const DIALECT_NAMES: Readonly<Record<SentinelDialect, string>> = { java: 'Sentinel', go: 'sentinel-golang' };

/**
 * Reads Sentinel's rule JSON as Floodgate rules: each list under its type (`flow`, `degrade`,
 * `param-flow`, `system`, `authority`; `isolation` for sentinel-golang), parsed or as its JSON
 * text (`null` or an empty text: no rules), exactly as Sentinel's
 * data sources and dashboard store it, into the rule set `loadRules` takes (`flow` →
 * `flow`, `degrade` → `circuitBreakers`, `param-flow` → `hotParams`, `isolation` → `flow` rules
 * of metric `'concurrency'`). Units and constants are converted (`timeWindow` seconds →
 * `retryTimeoutMs`, `grade` 0 → `'concurrency'`...). Fields at values that change nothing load
 * (`limitApp: "default"`, `strategy: 0`, a `clusterConfig` on a rule not in cluster mode, the
 * dashboard's `id`, `app`, `gmtCreate`...); every field Floodgate cannot honour is refused by
 * name, never dropped; and so is whatever Sentinel itself would ignore as invalid. Sentinel's
 * gateway rules read too: `gw-flow` (`GatewayFlowRule`) into `hotParams` rules whose `key` is
 * its `paramItem` (or, without one, into `flow` rules), `gw-api-group` (`ApiDefinition`) into
 * `apiGroups`; sentinel-golang has neither.
 * @throws RuleValidationError listing every problem at its Sentinel path
 * (`flow[0].strategy: 2 (CHAIN) is not supported: ...`), including what Floodgate's own
 * validation finds, named by the Sentinel field it came from.
 * @throws TypeError for bad options.
 * @example
 * const rules = fromSentinelRules({ flow: JSON.parse(flowJson), degrade: JSON.parse(degradeJson) });
 * fg.loadRules(rules);
 */
export function fromSentinelRules(
  rules: { readonly [T in SentinelRuleType]?: unknown },
  options: SentinelFormatOptions = {},
): RuleSetOptions {
  const dialect = dialectOf(options, 'fromSentinelRules');
  const reader = new RuleReader();
  const result: Partial<Record<RuleKindKey, unknown[]>> = {};
  for (const [type, codec, list] of documents(rules, dialect, reader)) {
    const read = (result[codec.kind] ??= []);
    for (const kind of codec.kinds) result[kind] ??= [];
    list.forEach((raw, i) => {
      const one = readOne(codec, raw, `${type}[${i}]`);
      reader.issues.push(...one.issues);
      if (one.read === undefined) return;
      if (one.read.kind === undefined || one.read.kind === codec.kind) read.push(one.read.rule);
      else (result[one.read.kind] ??= []).push(one.read.rule);
    });
  }
  reader.throwIfAny(`${DIALECT_NAMES[options.dialect ?? 'java']} rules rejected`);
  return result as RuleSetOptions;
}

/**
 * Writes Floodgate rules as Sentinel's rule JSON, one list per Sentinel type, in the shape
 * Sentinel's file data source writes (sentinel-golang's: the shape its data sources read); the
 * inverse of {@link fromSentinelRules}. Every kind given is written, an empty kind as empty
 * lists (sentinel-golang's `flow` and `isolation` both come from Floodgate's `flow`). With
 * `previous`, unchanged rules are written back as they were read.
 * @throws RuleValidationError listing, at Floodgate's paths, every problem of the rules
 * themselves and everything Sentinel cannot express (`flow[0].behavior: 'adaptive' has no
 * Sentinel equivalent`, a `warmUpPeriodMs` that is not whole seconds, ...).
 * @throws TypeError for bad options.
 * @example
 * const { flow, degrade } = toSentinelRules(fg.getRules());
 * await writeFile('flow-rules.json', JSON.stringify(flow));
 */
export function toSentinelRules(rules: RuleSetOptions, options: ToSentinelOptions = {}): SentinelRules {
  const dialect = dialectOf(options, 'toSentinelRules');
  const name = DIALECT_NAMES[options.dialect ?? 'java'];
  const set = normalizeRuleSet(rules) as Partial<Record<RuleKindKey, readonly AnyRule[]>>;
  const groups = new Set((set.apiGroups ?? []).map((group) => (group as { name: string }).name));
  const previous = new PreviousRules(options.previous, dialect, groups);
  const reader = new RuleReader();
  const written: Partial<Record<SentinelRuleType, Record<string, unknown>[]>> = {};
  // First every rule that is written back as it was, so that new rules know which flowIds stay in use.
  const entries: {
    type: SentinelRuleType;
    kind: RuleKindKey;
    rule: AnyRule;
    path: string;
    kept?: { readonly raw: Record<string, unknown>; readonly index: number };
  }[] = [];
  for (const kind of RULE_KINDS) {
    const list = set[kind.key];
    if (list === undefined) continue;
    const types = SENTINEL_RULE_TYPES.filter((type) => dialect.types[type]?.kinds.includes(kind.key));
    // A type's list is written (if empty) when its own kind is given, unless it is optional (see TypeCodec.optional).
    for (const type of types) {
      const codec = dialect.types[type]!;
      if (codec.kind === kind.key && (codec.optional !== true || previous.holds(type))) written[type] ??= [];
    }
    list.forEach((rule, i) => {
      const path = `${kind.key}[${i}]`;
      // Sentinel has no shadow: a rolled-out rule written as Sentinel's would refuse in full there.
      const rollout = rolloutField(rule);
      const writable = types.filter((t) => dialect.types[t]!.writes(rule, kind.key));
      // Where the rule was read from, if it was (a gateway flow rule stays one); else the first type that takes it.
      const type = writable.find((t) => previous.has(t, rule)) ?? writable[0];
      if (rollout !== undefined)
        reader.fail(
          `${path}.${rollout}`,
          `has no ${name} equivalent: ${name} enforces every rule it loads, so write this rule once it is enforced in full`,
        );
      else if (type === undefined) reader.fail(path, `has no ${name} equivalent (${name} has no ${kind.key} rules)`);
      else {
        written[type] ??= [];
        entries.push({ type, kind: kind.key, rule, path, kept: previous.take(type, rule) });
      }
    });
  }
  // A type written from several kinds (gateway rules) keeps the order its rules were read in; new rules follow.
  const order = (entry: (typeof entries)[number]) =>
    dialect.types[entry.type]!.kinds.length > 1 ? (entry.kept?.index ?? Infinity) : 0;
  entries.sort((a, b) => order(a) - order(b));
  for (const { type, kind, rule, path, kept } of entries) {
    written[type]!.push(
      ...(kept !== undefined
        ? [kept.raw]
        : dialect.types[type]!.write(rule, path, reader, previous.context(type, kind, rule))),
    );
  }
  reader.throwIfAny(`Rules cannot be written as ${name} rules`);
  return Object.fromEntries(SENTINEL_RULE_TYPES.filter((type) => written[type]).map((type) => [type, written[type]]));
}

/** The rollout field a rule in force has (`mode`, else `enforcePercent`), if any. */
function rolloutField(rule: AnyRule): string | undefined {
  const { mode, enforcePercent } = rule as RuleRollout;
  return mode !== undefined ? 'mode' : enforcePercent !== undefined ? 'enforcePercent' : undefined;
}

/** The dialect `options` name. @throws TypeError */
function dialectOf(options: SentinelFormatOptions, caller: string): DialectCodec {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${caller}: options must be an object`);
  const dialect = options.dialect ?? 'java';
  if (dialect !== 'java' && dialect !== 'go') {
    throw new TypeError(`${caller}: options.dialect must be 'java' or 'go', got ${show(dialect)}`);
  }
  return DIALECTS[dialect];
}

/** Each list of `rules` with its codec; types the dialect refuses, and lists that are not arrays, are reported. */
function documents(
  rules: unknown,
  dialect: DialectCodec,
  reader: RuleReader,
): [SentinelRuleType, TypeCodec, readonly unknown[]][] {
  const obj = reader.object(rules, 'rules');
  if (obj === undefined) return [];
  reader.knownKeys(obj, SENTINEL_RULE_TYPES, '');
  const found: [SentinelRuleType, TypeCodec, readonly unknown[]][] = [];
  for (const type of SENTINEL_RULE_TYPES) {
    if (obj[type] === undefined) continue;
    const list = listOf(obj[type], type, reader);
    const codec = dialect.types[type];
    if (codec !== undefined) found.push([type, codec, list]);
    else if (list.length > 0) reader.fail(type, dialect.refused[type] ?? 'is not supported');
  }
  return found;
}

/**
 * A type's rules: the list, or its JSON text (as a data source holds it). An empty data source
 * (`null`, or a text of nothing but white space) holds no rules.
 */
function listOf(value: unknown, type: SentinelRuleType, reader: RuleReader): readonly unknown[] {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return [];
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      reader.fail(type, `is not valid JSON (${(error as Error).message})`);
      return [];
    }
  }
  return parsed === null ? [] : reader.array(parsed, type);
}

/** One rule read: what it reads as, and every problem at its Sentinel path. */
interface ReadOne {
  readonly read?: ReadRule;
  /** The rule as Floodgate would hold it in force, when it reads without a problem. */
  readonly normalized?: AnyRule;
  readonly issues: RuleIssue[];
}

/**
 * Reads one Sentinel rule, then runs Floodgate's validation of its kind over the result, so one
 * piece of code judges ranges and combinations; its problems are named by the Sentinel field
 * they came from, unless the reading already reported that field.
 */
function readOne(codec: TypeCodec, raw: unknown, path: string): ReadOne {
  const reader = new RuleReader();
  const obj = sentinelObject(raw, path, reader);
  const read = obj === undefined ? undefined : codec.read(obj, path, reader);
  if (read === undefined) return { issues: reader.issues };
  const own = [...reader.issues];
  const checked = new RuleReader();
  const normalized = KINDS_BY_KEY.get(read.kind ?? codec.kind)!.normalize(read.rule, read.path, checked) as
    AnyRule | undefined;
  const issues = [...own];
  for (const issue of checked.issues) {
    const at = sentinelPath(issue.path, read);
    const known =
      own.some((o) => overlaps(o.path, at)) || issues.some((o) => o.path === at && o.message === issue.message);
    if (!known) issues.push({ path: at, message: issue.message });
  }
  return { read, ...(issues.length === 0 ? { normalized } : {}), issues };
}

/** `path` of a Floodgate field of `read.rule`, as the path of the Sentinel field it came from. */
function sentinelPath(path: string, read: ReadRule): string {
  const prefix = `${read.path}.`;
  if (!path.startsWith(prefix)) return path;
  const rest = path.slice(prefix.length);
  let best: string | undefined;
  for (const name of Object.keys(read.fields)) {
    const match = rest === name || rest.startsWith(`${name}.`) || rest.startsWith(`${name}[`);
    if (match && (best === undefined || name.length > best.length)) best = name;
  }
  // What follows a renamed field (an item's key, an origin's index) has no counterpart in Sentinel's.
  return best === undefined ? path : `${prefix}${read.fields[best]}`;
}

/** Whether one path is the other or lies within it. */
function overlaps(a: string, b: string): boolean {
  const within = (inner: string, outer: string) =>
    inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
  return within(a, b) || within(b, a);
}

/** A previous Sentinel rule that reads without a problem. */
interface Candidate {
  readonly raw: SentinelRule;
  /** Its Floodgate rule in force, as JSON. */
  readonly json: string;
  /** Which rule it stands for when a rule replaces it (see {@link carryKey}). */
  readonly carryKey: string;
  readonly carried: Carried;
  kept: boolean;
}

/**
 * Who a rule is, for carrying what Floodgate does not keep (a flowId, item types) from the rule it
 * replaces: its resource, and its origin or parameter.
 */
function carryKey(rule: AnyRule): string {
  const r = rule as Partial<Record<'resource' | 'name' | 'limitOrigin' | 'paramIndex' | 'paramKey' | 'key', unknown>>;
  return JSON.stringify([
    r.resource ?? r.name ?? null,
    r.limitOrigin ?? null,
    r.paramIndex ?? null,
    r.paramKey ?? null,
    r.key ?? null,
  ]);
}

/** The rules {@link ToSentinelOptions.previous} holds, and what writing takes from them. */
class PreviousRules {
  private readonly candidates = new Map<SentinelRuleType, Candidate[]>();
  /** Every flowId in use: the previous rules' (kept or replaced) and those given out. */
  private readonly flowIds = new Set<number>();
  private readonly replaced = new Set<number>();

  constructor(
    previous: ToSentinelOptions['previous'],
    dialect: DialectCodec,
    /** The names of the API groups of the rule set written. */
    private readonly groups: ReadonlySet<string>,
  ) {
    if (previous === undefined) return;
    for (const [type, codec, list] of documents(previous, dialect, new RuleReader())) {
      const candidates: Candidate[] = [];
      list.forEach((raw, i) => {
        const one = readOne(codec, raw, `${type}[${i}]`);
        if (one.normalized === undefined || one.read === undefined) return;
        const carried = one.read.carried ?? {};
        if (carried.flowId !== undefined) this.flowIds.add(carried.flowId);
        candidates.push({
          raw: raw as SentinelRule,
          json: JSON.stringify(one.normalized),
          carryKey: carryKey(one.normalized),
          carried,
          kept: false,
        });
      });
      this.candidates.set(type, candidates);
    }
  }

  /** Whether the previous rules held a list of `type`. */
  holds(type: SentinelRuleType): boolean {
    return this.candidates.has(type);
  }

  /** Whether `type` held a previous rule that reads as `rule`, or that `rule` replaces (same identity). */
  has(type: SentinelRuleType, rule: AnyRule): boolean {
    const json = JSON.stringify(rule);
    const key = carryKey(rule);
    return (this.candidates.get(type) ?? []).some((c) => (!c.kept && c.json === json) || c.carryKey === key);
  }

  /** A copy of a previous rule that reads as `rule`, not taken yet, and its place in its list, if there is one. */
  take(type: SentinelRuleType, rule: AnyRule): { raw: Record<string, unknown>; index: number } | undefined {
    const json = JSON.stringify(rule);
    const list = this.candidates.get(type) ?? [];
    const index = list.findIndex((c) => !c.kept && c.json === json);
    if (index < 0) return undefined;
    const found = list[index]!;
    found.kept = true;
    return { raw: structuredClone(found.raw), index };
  }

  /** What writing `rule` afresh takes from the previous rules it replaces. */
  context(type: SentinelRuleType, kind: RuleKindKey, rule: AnyRule): WriteContext {
    const key = carryKey(rule);
    const same = (this.candidates.get(type) ?? []).filter((c) => c.carryKey === key);
    return {
      kind,
      apiGroup: (name) => this.groups.has(name),
      flowId: () => {
        const replaced = same.find(
          (c) => !c.kept && c.carried.flowId !== undefined && !this.replaced.has(c.carried.flowId),
        );
        if (replaced?.carried.flowId !== undefined) {
          this.replaced.add(replaced.carried.flowId);
          return replaced.carried.flowId;
        }
        return this.derivedFlowId(`${type}\n${key}`);
      },
      itemType: (itemKey) => {
        for (const c of same) {
          const itemType = c.carried.itemTypes?.[itemKey];
          if (itemType !== undefined) return itemType;
        }
        return undefined;
      },
    };
  }

  /**
   * A flowId for a new cluster rule: from its type and identity, so every writer of the same rule
   * gives it the same id (Sentinel's token server knows a rule by its id), unused by any other.
   */
  private derivedFlowId(identity: string): number {
    let id = createHash('sha256').update(identity).digest().readUIntBE(0, 6) + 1;
    while (this.flowIds.has(id)) id++;
    this.flowIds.add(id);
    return id;
  }
}
