import type { ApiGroup } from '../api-group/api-group';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import type { KeyMatchStrategy, KeySource, KeySourceFrom } from '../kernel/key-source';
import { join, MAX_DURATION_MS, show, type RuleReader } from '../kernel/rule-reader';
import {
  ENTITY_FIELDS,
  readConstant,
  readHotspotCounting,
  sentinelCapacity,
  sentinelObject,
  toSeconds,
  wholeNumber,
  type Constant,
  type ReadRule,
  type TypeCodec,
  type WriteContext,
} from './sentinel-codec';

/*
 * Sentinel's gateway dialect (sentinel-api-gateway-adapter-common 1.8): `GatewayFlowRule` with its
 * `GatewayParamFlowItem`, and `ApiDefinition` with its `ApiPathPredicateItem`s, the constants of
 * `SentinelGatewayConstants`, as Spring Cloud Alibaba's `gw-flow` and `gw-api-group` data sources
 * and the dashboard (`GatewayFlowRuleEntity`, `ApiDefinitionEntity`) store them.
 *
 * Sentinel converts every gateway rule to a parameter rule (`GatewayRuleConverter`): with a
 * `paramItem`, a hotspot rule over the request attribute it parses; without, a hotspot rule over
 * one constant value, a limit on the route or API as a whole. Floodgate reads the first as a
 * hotspot rule whose `key` is the item (its `parseStrategy` the key source, its `pattern` and
 * `matchStrategy` the key's `match`), and the second as a flow rule on the resource.
 */

const RESOURCE_MODES: readonly Constant<0 | 1>[] = [
  { value: 0, name: 'RESOURCE_MODE_ROUTE_ID', means: 0 },
  { value: 1, name: 'RESOURCE_MODE_CUSTOM_API_NAME', means: 1 },
];
const PARSE_STRATEGIES: readonly Constant<KeySourceFrom>[] = [
  { value: 0, name: 'PARAM_PARSE_STRATEGY_CLIENT_IP', means: 'ip' },
  { value: 1, name: 'PARAM_PARSE_STRATEGY_HOST', means: 'host' },
  { value: 2, name: 'PARAM_PARSE_STRATEGY_HEADER', means: 'header' },
  { value: 3, name: 'PARAM_PARSE_STRATEGY_URL_PARAM', means: 'query' },
  { value: 4, name: 'PARAM_PARSE_STRATEGY_COOKIE', means: 'cookie' },
];
const PARAM_MATCHES: readonly Constant<KeyMatchStrategy>[] = [
  { value: 0, name: 'PARAM_MATCH_STRATEGY_EXACT', means: 'exact' },
  { value: 1, name: 'PARAM_MATCH_STRATEGY_PREFIX', means: 'prefix' },
  { value: 2, name: 'PARAM_MATCH_STRATEGY_REGEX', means: 'regex' },
  { value: 3, name: 'PARAM_MATCH_STRATEGY_CONTAINS', means: 'contains' },
];
const URL_MATCHES: readonly Constant<'exact' | 'prefix' | 'regex'>[] = [
  { value: 0, name: 'URL_MATCH_STRATEGY_EXACT', means: 'exact' },
  { value: 1, name: 'URL_MATCH_STRATEGY_PREFIX', means: 'prefix' },
  { value: 2, name: 'URL_MATCH_STRATEGY_REGEX', means: 'regex' },
];
/** The dashboard's `intervalUnit` (`GatewayFlowRuleEntity`): seconds, minutes, hours, days, in seconds. */
const INTERVAL_UNITS: readonly Constant<number>[] = [
  { value: 0, name: 'INTERVAL_UNIT_SECOND', means: 1 },
  { value: 1, name: 'INTERVAL_UNIT_MINUTE', means: 60 },
  { value: 2, name: 'INTERVAL_UNIT_HOUR', means: 3600 },
  { value: 3, name: 'INTERVAL_UNIT_DAY', means: 86_400 },
];
const NAMED: ReadonlySet<KeySourceFrom> = new Set(['header', 'query', 'cookie']);
const JAVA_INT = { min: 0, max: 2 ** 31 - 1, integer: true } as const;
/** `GatewayFlowRule.maxQueueingTimeoutMs`'s default. */
const DEFAULT_QUEUEING_MS = 500;

const RULE_FIELDS = [
  'resource',
  'resourceMode',
  'grade',
  'count',
  'intervalSec',
  'controlBehavior',
  'burst',
  'maxQueueingTimeoutMs',
  'paramItem',
  // The dashboard's entity: the interval as a number and a unit, and its own bookkeeping.
  'interval',
  'intervalUnit',
  ...ENTITY_FIELDS,
];
/** `index` is the parameter position Sentinel gives the item when it converts the rule: it writes it, and reads it back never. */
const ITEM_FIELDS = ['parseStrategy', 'fieldName', 'pattern', 'matchStrategy', 'index'];

// ---- gw-flow ----

/** Floodgate's fields of a gateway rule's counting, by Sentinel's name for each. */
const COUNTING_FIELDS: Readonly<Record<string, string>> = {
  threshold: 'count',
  metric: 'grade',
  behavior: 'controlBehavior',
  maxQueueingTimeMs: 'maxQueueingTimeoutMs',
};

/** The rule's interval in seconds: `intervalSec`, or the dashboard's `interval` × `intervalUnit`. */
function intervalOf(obj: Record<string, unknown>, path: string, reader: RuleReader): number | undefined {
  const max = Math.floor(MAX_DURATION_MS / 1000);
  if (obj.interval === undefined) {
    const sec = reader.number(obj, 'intervalSec', path, { min: 1, max, integer: true }, 1);
    return Number.isSafeInteger(sec) && sec >= 1 && sec <= max ? sec : undefined;
  }
  const unit = readConstant(obj, 'intervalUnit', path, reader, INTERVAL_UNITS, 0);
  const interval = reader.number(obj, 'interval', path, { min: 1, integer: true });
  if (unit === undefined || !Number.isSafeInteger(interval) || interval < 1) return undefined;
  if (interval * unit > max) {
    reader.fail(join(path, 'interval'), `must make at most ${max} seconds, got ${interval * unit}`);
    return undefined;
  }
  return interval * unit;
}

/** The `paramItem` as a key source, or `undefined` with its problems reported. */
function readParamItem(value: unknown, path: string, reader: RuleReader): Record<string, unknown> | undefined {
  const item = sentinelObject(value, path, reader);
  if (item === undefined) return undefined;
  reader.knownKeys(item, ITEM_FIELDS, path);
  if (item.index !== undefined) reader.number(item, 'index', path, { integer: true });
  const from = readConstant(item, 'parseStrategy', path, reader, PARSE_STRATEGIES, 0);
  if (from === undefined) return undefined;
  const fieldName = item.fieldName;
  let name: unknown;
  if (NAMED.has(from)) {
    if (typeof fieldName !== 'string' || fieldName.trim() === '') {
      const strategy = PARSE_STRATEGIES.find((c) => c.means === from)!;
      reader.fail(
        join(path, 'fieldName'),
        `is required for parseStrategy ${strategy.value} (${strategy.name}): Sentinel ignores the rule without it, got ${show(fieldName)}`,
      );
      return undefined;
    }
    name = fieldName;
  } else if (fieldName !== undefined && typeof fieldName !== 'string') {
    // Sentinel does not read it for a client IP or the host: any text loads.
    reader.fail(join(path, 'fieldName'), `must be a string, got ${show(fieldName)}`);
  }
  const pattern = item.pattern;
  let match: Record<string, unknown> | undefined;
  if (pattern !== undefined && pattern !== '') {
    // As Sentinel: a pattern makes the rule count only the values that match it; matchStrategy counts only then.
    const strategy = readConstant(item, 'matchStrategy', path, reader, PARAM_MATCHES, 0);
    if (strategy !== undefined) match = { strategy, pattern };
  } else if (item.matchStrategy !== undefined) reader.number(item, 'matchStrategy', path, { integer: true });
  return {
    from,
    ...(name !== undefined ? { name } : {}),
    // Sentinel counts each client address on its own.
    ...(from === 'ip' ? { ipv6Subnet: false } : {}),
    ...(match !== undefined ? { match } : {}),
  };
}

function readGatewayFlow(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule | undefined {
  reader.knownKeys(obj, RULE_FIELDS, path);
  readConstant(obj, 'resourceMode', path, reader, RESOURCE_MODES, 0);
  const { metric, behavior } = readHotspotCounting(obj, path, reader, "a gateway rule's count");
  const intervalSec = intervalOf(obj, path, reader);
  const burst = reader.number(obj, 'burst', path, JAVA_INT, 0);
  const throttle = behavior === 'throttle';
  const queueing = reader.number(obj, 'maxQueueingTimeoutMs', path, JAVA_INT, DEFAULT_QUEUEING_MS);
  const intervalField = obj.interval !== undefined ? 'interval' : 'intervalSec';
  if (obj.paramItem === undefined) {
    // The route or API as a whole: a flow rule, which counts over one second with no burst.
    if (intervalSec !== undefined && intervalSec !== 1) {
      reader.fail(
        join(path, intervalField),
        `must make 1 second for a rule without paramItem: Floodgate limits a whole route as a flow rule, over one second (a paramItem rule may count over longer), got ${intervalSec} s`,
      );
    }
    if (burst !== 0 && Number.isSafeInteger(burst)) {
      reader.fail(
        join(path, 'burst'),
        `must be 0 for a rule without paramItem: a Floodgate flow rule has no burst (a paramItem rule has), got ${burst}`,
      );
    }
    return {
      kind: 'flow',
      rule: {
        resource: obj.resource,
        metric: metric ?? 'qps',
        threshold: obj.count,
        behavior: behavior ?? 'reject',
        ...(throttle ? { maxQueueingTimeMs: queueing } : {}),
      },
      path,
      fields: COUNTING_FIELDS,
    };
  }
  const key = readParamItem(obj.paramItem, join(path, 'paramItem'), reader);
  return {
    kind: 'hotParams',
    rule: {
      resource: obj.resource,
      key: key ?? { from: 'ip', ipv6Subnet: false },
      metric: metric ?? 'qps',
      threshold: obj.count,
      behavior: behavior ?? 'reject',
      durationMs: (intervalSec ?? 1) * 1000,
      burstCount: Number.isSafeInteger(burst) ? burst : 0,
      ...(throttle ? { maxQueueingTimeMs: queueing } : {}),
    },
    path,
    fields: {
      ...COUNTING_FIELDS,
      durationMs: intervalField,
      burstCount: 'burst',
      key: 'paramItem',
      'key.from': 'paramItem.parseStrategy',
      'key.name': 'paramItem.fieldName',
      'key.match': 'paramItem',
      'key.match.pattern': 'paramItem.pattern',
      'key.match.strategy': 'paramItem.matchStrategy',
    },
  };
}

/** Whether a flow rule is one a gateway rule without `paramItem` can say. */
function gatewayFlowRule(rule: FlowRule): boolean {
  return (
    rule.strategy === 'direct' &&
    rule.limitOrigin === 'default' &&
    rule.cluster === undefined &&
    (rule.behavior === 'reject' || rule.behavior === 'throttle')
  );
}

/** A flow rule as a gateway rule without `paramItem` (written where one was read: see `gatewayFlowRule`). */
function writeFlowAsGateway(rule: FlowRule, path: string, reader: RuleReader, context: WriteContext) {
  return [gatewayRule(rule, 1, 0, rule.maxQueueingTimeMs ?? DEFAULT_QUEUEING_MS, path, reader, context)];
}

/** The fields every gateway rule written has, in the order Sentinel's file data source writes them. */
function gatewayRule(
  rule: FlowRule | HotParamRule,
  intervalSec: number,
  burst: number,
  queueing: number,
  path: string,
  reader: RuleReader,
  context: WriteContext,
): Record<string, unknown> {
  wholeNumber(rule.threshold, path, 'threshold', 'a double Sentinel truncates', reader);
  wholeNumber(queueing, path, 'maxQueueingTimeMs', 'an int', reader);
  return {
    resource: rule.resource,
    resourceMode: context.apiGroup(rule.resource) ? 1 : 0,
    grade: rule.metric === 'qps' ? 1 : 0,
    count: rule.threshold,
    intervalSec,
    controlBehavior: rule.behavior === 'throttle' ? 2 : 0,
    burst,
    maxQueueingTimeoutMs: queueing,
  };
}

/** A hotspot rule keyed by a request attribute as a gateway rule with its `paramItem`. */
function writeHotParamAsGateway(rule: HotParamRule, path: string, reader: RuleReader, context: WriteContext) {
  const key = rule.key!;
  const strategy = PARSE_STRATEGIES.find((c) => c.means === key.from);
  if (strategy === undefined) {
    reader.fail(
      join(path, 'key.from'),
      `'${key.from}' has no Sentinel equivalent (its gateway rules parse a client IP, the host, a header, a URL parameter or a cookie)`,
    );
    return [];
  }
  if (key.from === 'ip' && key.ipv6Subnet !== false) {
    reader.fail(
      join(path, 'key.ipv6Subnet'),
      `must be false: Sentinel counts each client address on its own, got ${show(key.ipv6Subnet)}`,
    );
  }
  if (Object.keys(rule.specificItems).length > 0) {
    reader.fail(join(path, 'specificItems'), "has no equivalent in Sentinel's gateway rules (they have no items)");
  }
  if (rule.cluster !== undefined)
    reader.fail(join(path, 'cluster'), "is not supported by Sentinel's gateway rules here");
  const intervalSec = toSeconds(rule.durationMs, path, 'durationMs', 'intervalSec', reader);
  sentinelCapacity(rule, intervalSec, path, reader);
  const queueing = rule.behavior === 'throttle' ? rule.maxQueueingTimeMs : DEFAULT_QUEUEING_MS;
  return [
    {
      ...gatewayRule(rule, intervalSec, rule.burstCount, queueing, path, reader, context),
      paramItem: paramItemOf(key, strategy.value),
    },
  ];
}

function paramItemOf(key: KeySource, parseStrategy: number): Record<string, unknown> {
  return {
    parseStrategy,
    ...(key.name !== undefined ? { fieldName: key.name } : {}),
    ...(key.match !== undefined
      ? {
          pattern: key.match.pattern,
          matchStrategy: PARAM_MATCHES.find((c) => c.means === key.match!.strategy)!.value,
        }
      : {}),
  };
}

/**
 * `gw-flow`: Sentinel's `GatewayFlowRule`s, read as hotspot rules keyed by their `paramItem` (or
 * flow rules without one); hotspot rules with a `key` are written as gateway rules, and a flow
 * rule where a gateway rule of the same resource was read.
 */
export const GATEWAY_FLOW_CODEC: TypeCodec = {
  kind: 'hotParams',
  kinds: ['hotParams', 'flow'],
  optional: true,
  writes: (rule, kind) =>
    kind === 'flow' ? gatewayFlowRule(rule as FlowRule) : (rule as HotParamRule).key !== undefined,
  read: readGatewayFlow,
  write: (rule, path, reader, context) =>
    context.kind === 'flow'
      ? writeFlowAsGateway(rule as FlowRule, path, reader, context)
      : writeHotParamAsGateway(rule as HotParamRule, path, reader, context),
};

// ---- gw-api-group ----

/** Characters a regular expression reads as syntax. */
const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/g;

/** A regex that matches exactly `text`. */
function literalRegex(text: string): string {
  return text.replace(REGEX_SYNTAX, '\\$&');
}

/** The text a regex made by {@link literalRegex} matches, or `undefined` when it is a pattern. */
function literalOf(regex: string): string | undefined {
  let text = '';
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i]!;
    if (c === '\\') {
      const next = regex[i + 1];
      if (next === undefined || !/[\\^$.|?*+()[\]{}]/.test(next)) return undefined;
      text += next;
      i++;
    } else if (/[\\^$.|?*+()[\]{}]/.test(c)) return undefined;
    else text += c;
  }
  return text;
}

/**
 * An Ant path pattern (Spring's `AntPathMatcher`, which Sentinel's prefix strategy uses) as a
 * regex over the whole path: `**` as a whole segment is any number of segments, `*` any run
 * within a segment, `?` one character of one. URI template variables (`{id}`) are refused.
 */
function antRegex(pattern: string): string | { problem: string } {
  if (pattern.includes('{')) return { problem: 'URI template variables ({name}) are not supported: use a regex (2)' };
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern.startsWith('/**', i) && (i + 3 === pattern.length || pattern[i + 3] === '/')) {
      out += '(/.*)?';
      i += 2;
      continue;
    }
    if (pattern.startsWith('**', i) && i === 0 && (pattern.length === 2 || pattern[2] === '/')) {
      out += '.*';
      i += 1;
      continue;
    }
    const c = pattern[i]!;
    if (c === '*') {
      while (pattern[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else out += literalRegex(c);
  }
  return out;
}

const API_FIELDS = ['apiName', 'predicateItems', ...ENTITY_FIELDS];

function readApiDefinition(obj: Record<string, unknown>, path: string, reader: RuleReader): ReadRule {
  reader.knownKeys(obj, API_FIELDS, path);
  const at = join(path, 'predicateItems');
  const patterns: unknown[] = [];
  const fields: Record<string, string> = { name: 'apiName', patterns: 'predicateItems' };
  reader.array(obj.predicateItems ?? [], at).forEach((raw, i) => {
    const itemPath = `${at}[${i}]`;
    const item = sentinelObject(raw, itemPath, reader);
    if (item === undefined) return;
    if (item.items !== undefined) {
      reader.fail(
        join(itemPath, 'items'),
        "is not supported: a predicate group (ApiPredicateGroupItem) is never matched by Sentinel's gateway adapters; list its items in predicateItems",
      );
      return;
    }
    reader.knownKeys(item, ['pattern', 'matchStrategy'], itemPath);
    const strategy = readConstant(item, 'matchStrategy', itemPath, reader, URL_MATCHES, 0);
    const pattern = item.pattern;
    if (typeof pattern !== 'string' || pattern.trim() === '') {
      reader.fail(
        join(itemPath, 'pattern'),
        `must be a path pattern (Sentinel skips an item without one), got ${show(pattern)}`,
      );
      return;
    }
    if (strategy === undefined) return;
    let regex: string;
    if (strategy === 'exact') regex = literalRegex(pattern);
    else if (strategy === 'regex') regex = pattern;
    else {
      const converted = antRegex(pattern);
      if (typeof converted !== 'string') {
        reader.fail(join(itemPath, 'pattern'), `${converted.problem}, got ${show(pattern)}`);
        return;
      }
      regex = converted;
    }
    fields[`patterns[${patterns.length}]`] = `predicateItems[${i}].pattern`;
    patterns.push({ regex });
  });
  return { rule: { name: obj.apiName, patterns }, path, fields };
}

/** Route patterns Sentinel can say: a literal path for any method (`'/health'`). */
const LITERAL_ROUTE = /^\/[A-Za-z0-9/._~-]*$/;

function writeApiDefinition(group: ApiGroup, path: string, reader: RuleReader): Record<string, unknown>[] {
  const predicateItems = group.patterns.map((pattern, i) => {
    const at = `${join(path, 'patterns')}[${i}]`;
    if (typeof pattern === 'string') {
      if (LITERAL_ROUTE.test(pattern)) return { pattern, matchStrategy: 0 };
      reader.fail(
        at,
        `has no Sentinel equivalent: Sentinel's API predicates match a path for any method, exactly, by an Ant pattern or by a regex (write it as { regex }), got ${show(pattern)}`,
      );
      return {};
    }
    if (pattern.method !== '*') {
      reader.fail(
        join(at, 'method'),
        `must be '*' (or absent): Sentinel's API predicates match paths for any method, got ${show(pattern.method)}`,
      );
    }
    const literal = literalOf(pattern.regex);
    return literal !== undefined
      ? { pattern: literal, matchStrategy: 0 }
      : { pattern: pattern.regex, matchStrategy: 2 };
  });
  return [{ apiName: group.name, predicateItems }];
}

/** `gw-api-group`: Sentinel's `ApiDefinition`s, read as API groups, each predicate a regex over the path. */
export const API_DEFINITION_CODEC: TypeCodec = {
  kind: 'apiGroups',
  kinds: ['apiGroups'],
  optional: true,
  writes: () => true,
  read: readApiDefinition,
  write: (rule, path, reader) => writeApiDefinition(rule as ApiGroup, path, reader),
};
