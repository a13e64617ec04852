import { LRUCache } from 'lru-cache';
import type { ClusterBinding, ClusterKind, ClusterLimiterSpec } from '../cluster/cluster-contract';
import { keySourceId, type KeySource } from '../kernel/key-source';
import type { CompileContext, RuleKind } from '../kernel/rule-kind';
import {
  type HotParamChecker,
  HotParamConcurrencyChecker,
  HotParamRejectChecker,
  HotParamThrottleChecker,
  hotParamKey,
  type InFlightCounter,
  type ParamValueState,
} from './hot-param-checker';
import {
  HOT_PARAM_KIND_NAME,
  HotParamBlockError,
  normalizeHotParamRule,
  type HotParamRule,
  type HotParamRuleOptions,
} from './hot-param-rule';

/**
 * Compiles one resource's hotspot rules into checkers, one per rule, in rule order. A rule
 * identical to one in force before keeps that rule's LRU, so its values keep their tokens,
 * pacing and counters across a reload; a new or changed rule starts with no value tracked.
 *
 * The LRU is lru-cache: measured against toad-cache on the hot path, both take 10–20 ns for a
 * hit, and lru-cache is the faster of the two (about 0.4 µs against 0.7 µs) where it matters
 * most, a flood of new values evicting old ones, and stores no per-value node object.
 */
function compileHotParamRules(rules: readonly HotParamRule[], ctx: CompileContext) {
  const checkers = rules.map((rule): HotParamChecker => {
    if (rule.metric === 'concurrency') {
      return new HotParamConcurrencyChecker(
        rule,
        ctx.reuse(rule, () => new LRUCache<string, InFlightCounter>({ max: rule.capacity })),
      );
    }
    const cache = ctx.reuse(rule, () => new LRUCache<string, ParamValueState>({ max: rule.capacity }));
    return rule.behavior === 'throttle'
      ? new HotParamThrottleChecker(rule, cache)
      : new HotParamRejectChecker(rule, cache);
  });
  const paramKeys = [...new Set(rules.flatMap((rule) => (rule.paramKey === undefined ? [] : [rule.paramKey])))];
  const keySources = new Map<string, KeySource>();
  for (const rule of rules) {
    // One per source: the values are read once, whatever each rule's match.
    if (rule.key !== undefined) {
      const { match: _match, ...source } = rule.key;
      keySources.set(keySourceId(source), source);
    }
  }
  return {
    checkers,
    ...(paramKeys.length > 0 ? { paramKeys } : {}),
    ...(keySources.size > 0 ? { keySources: [...keySources.values()] } : {}),
  };
}

/**
 * QPS hotspot rules in the store: `reject` is a token bucket per value, `throttle` shared
 * pacing per value. The value is read, keyed and given its threshold exactly as the local rule
 * does; an array asks for all its values at once, all or nothing.
 */
const hotParamCluster: ClusterBinding<HotParamRule> = {
  leases: false,
  localWindowMs: (rule) => rule.durationMs,
  identity: (rule) => [
    'hotParam',
    rule.resource,
    rule.behavior,
    rule.key !== undefined
      ? `source:${keySourceId(rule.key)}${rule.key.match === undefined ? '' : `:${rule.key.match.strategy}:${rule.key.match.pattern}`}`
      : rule.paramKey !== undefined
        ? `key:${rule.paramKey}`
        : `index:${rule.paramIndex}`,
  ],
  spec(rule, key): ClusterLimiterSpec {
    const base = {
      key,
      threshold: rule.threshold,
      thresholdType: rule.cluster!.thresholdType,
      durationMs: rule.durationMs,
    };
    return rule.behavior === 'throttle'
      ? { kind: 'pace', ...base, maxQueueingTimeMs: rule.maxQueueingTimeMs }
      : { kind: 'tokenBucket', ...base, burstCount: rule.burstCount };
  },
  request(_rule, local, entry) {
    const checker = local as HotParamChecker;
    const value = checker.read(entry);
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) {
      const values = value.filter((v) => v !== undefined && v !== null && hotParamKey(v) !== undefined);
      if (values.length === 0) return undefined;
      const scopes = values.map((v) => hotParamKey(v)!);
      return { scopes, thresholds: scopes.map((key) => checker.thresholdOf(key)), values, each: true };
    }
    const key = hotParamKey(value);
    if (key === undefined) return undefined;
    return { scopes: [key], thresholds: [checker.thresholdOf(key)], values: [value], each: false };
  },
  refuse: (rule, entry, request, decision) =>
    new HotParamBlockError({
      resource: entry.resource,
      rule,
      value: request.values?.[decision.index ?? 0],
      retryAfterMs: decision.retryAfterMs,
      origin: entry.origin,
    }),
};

/** Hotspot rules: per-value QPS, pacing and concurrency limits, in bounded memory. */
export const hotParamKind: RuleKind<'hotParams', HotParamRule, HotParamRuleOptions> & ClusterKind<HotParamRule> = {
  key: 'hotParams',
  name: HOT_PARAM_KIND_NAME,
  routeOption: 'hotParam',
  scope: 'resource',
  codes: { ERR_HOT_PARAM_BLOCKED: 'A hotspot parameter rule blocked the call for one parameter value.' },
  normalize: normalizeHotParamRule,
  resourceOf: (rule) => rule.resource,
  compile: compileHotParamRules,
  cluster: hotParamCluster,
};
