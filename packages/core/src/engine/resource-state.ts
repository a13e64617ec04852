import { LRUCache } from 'lru-cache';
import { withCluster } from '../cluster/cluster-checker';
import { boundedKey } from '../kernel/bounded-key';
import type { ClusterBackend, ClusterKind } from '../cluster/cluster-contract';
import { keySourceId, type KeySource } from '../kernel/key-source';
import type { Checker, CompiledRules, CompileContext, EventSink, ExitHook, RuleKind } from '../kernel/rule-kind';
import { StatisticNode } from '../kernel/statistic-node';
import type { Clock } from '../kernel/clock';
import { ruleIdOf, type RuleBlockCounts } from './block-counts';
import { PriorityCounts } from './priority-counts';
import { RULE_KINDS, type AnyRule } from './kinds';
import { stateIdentity, withRollout } from './rollout';

/** Most origins counted on their own for `limitOrigin: 'other'` rules, per resource (least recently seen dropped first). */
export const MAX_OTHER_ORIGINS = 1000;

/** What a resource's rules need from adapters, from `Floodgate.resourceInfo()`. */
export interface ResourceInfo {
  /**
   * Whether `enter()` on the resource may wait (a throttling queue) or ask a shared store, for an
   * outbound call; when false, `entry()` decides exactly as `enter()` would.
   */
  readonly mayWait: boolean;
  /** The same for an inbound call (system protection may add checks). */
  readonly inboundMayWait: boolean;
  /** The `params` keys hotspot rules read (adapters capture route parameters only when needed). */
  readonly paramKeys: readonly string[];
  /** The key sources hotspot rules read (`key`), each once, without their matches: adapters read only these. */
  readonly keySources: readonly KeySource[];
}

/** What compiling needs from the engine. */
export interface CompileServices {
  readonly clock: Clock;
  readonly random: () => number;
  readonly events: EventSink;
  readonly cluster: ClusterBackend | undefined;
  /** What each kind's `services` hook made of the engine, by kind key. */
  readonly kindServices: ReadonlyMap<string, unknown>;
  lookupNode(resource: string): StatisticNode | undefined;
  rulesOf(kind: RuleKind, resource: string): readonly AnyRule[];
}

/**
 * One resource's compiled rules: what the hot path runs, in check order. `checkers` serves
 * outbound calls; `inboundCheckers` has the inbound kinds' checks (system protection) in their
 * place in the order, for inbound calls.
 */
export class ResourceRules {
  readonly checkers: readonly Checker[];
  readonly inboundCheckers: readonly Checker[];
  /** The checkers told of completions (circuit breakers). */
  readonly exitHooks: readonly ExitHook[];
  readonly info: ResourceInfo;

  constructor(
    /** Each kind's compiled rules for this resource (empty for inbound kinds), in kind order. */
    readonly byKind: readonly CompiledRules[],
    /** Each inbound kind's compiled rules (shared by every resource), in kind order. */
    inbound: readonly (CompiledRules | undefined)[],
  ) {
    const checkers: Checker[] = [];
    const inboundCheckers: Checker[] = [];
    const paramKeys = new Set<string>();
    const keySources = new Map<string, KeySource>();
    for (let k = 0; k < byKind.length; k++) {
      for (const checker of byKind[k]!.checkers) {
        checkers.push(checker);
        inboundCheckers.push(checker);
      }
      for (const checker of inbound[k]?.checkers ?? []) inboundCheckers.push(checker);
      for (const key of byKind[k]!.paramKeys ?? []) paramKeys.add(key);
      for (const source of byKind[k]!.keySources ?? []) keySources.set(keySourceId(source), source);
    }
    this.checkers = checkers;
    this.inboundCheckers = inboundCheckers;
    this.exitHooks = checkers.filter((checker): checker is Checker & ExitHook => checker.onExit !== undefined);
    const waits = (list: readonly Checker[]): boolean =>
      list.some((checker) => checker.mayWait === true || checker.checkAsync !== undefined);
    this.info = Object.freeze({
      mayWait: waits(checkers),
      inboundMayWait: waits(inboundCheckers),
      paramKeys: Object.freeze([...paramKeys]),
      keySources: Object.freeze([...keySources.values()]),
    });
  }

  /** The origins whose statistics the rules read, merged over kinds. */
  origins(): { readonly named: ReadonlySet<string>; readonly other: boolean } | undefined {
    let named: Set<string> | undefined;
    let other = false;
    for (const compiled of this.byKind) {
      if (compiled.origins === undefined) continue;
      named ??= new Set();
      for (const name of compiled.origins.named) named.add(name);
      other ||= compiled.origins.other;
    }
    return named === undefined ? undefined : { named, other };
  }
}

const NO_RULES: CompiledRules = Object.freeze({ checkers: Object.freeze([]) });

/**
 * The state a set of rules keeps between compilations: each rule's state object (breaker,
 * tokens, pacing, LRU, cluster limiter) by the rule's identity, so a recompilation keeps the
 * state of unchanged rules and retires the rest.
 */
export class RulePool {
  private pool = new Map<string, unknown>();

  /** Compiles `rules` of `kind` with `services`, reusing the state of rules in force before. */
  compile(kind: RuleKind, resource: string, rules: readonly AnyRule[], services: CompileServices): CompiledRules {
    if (rules.length === 0) {
      this.retire(kind.key, new Map());
      return NO_RULES;
    }
    const next = new Map<string, unknown>();
    const seen = new Map<string, number>();
    const ctx: CompileContext = {
      resource,
      clock: services.clock,
      random: services.random,
      events: services.events,
      services: services.kindServices.get(kind.key),
      lookupNode: (name) => services.lookupNode(name),
      reuse: <T>(rule: object, make: () => T): T => {
        // Without its rollout fields: a rule moved between shadow and enforced keeps its state.
        const identity = `${kind.key}\u0000${stateIdentity(rule)}`;
        const nth = seen.get(identity) ?? 0;
        seen.set(identity, nth + 1);
        const key = `${identity}#${nth}`;
        const value = this.pool.has(key) ? (this.pool.get(key) as T) : make();
        next.set(key, value);
        return value;
      },
    };
    const compiled = kind.compile(rules, ctx);
    const checkers = withRollout(
      kind,
      resource,
      rules,
      withCluster(
        (kind as ClusterKind<object>).cluster,
        rules as readonly { cluster?: never }[],
        compiled.checkers,
        services.cluster,
        ctx,
      ),
      {
        random: services.random,
        events: services.events,
        ruleIdOf: (error) => ruleIdOf(error, (k, r) => services.rulesOf(k, r)),
      },
    );
    this.retire(kind.key, next);
    return checkers === compiled.checkers ? compiled : { ...compiled, checkers };
  }

  /** Retires the state of `kind`'s rules that `next` does not keep, and keeps `next`. */
  private retire(kindKey: string, next: Map<string, unknown>): void {
    const prefix = `${kindKey}\u0000`;
    for (const [key, value] of this.pool) {
      if (!key.startsWith(prefix)) continue;
      if (!next.has(key)) (value as { retire?(): void } | null)?.retire?.();
      this.pool.delete(key);
    }
    for (const [key, value] of next) this.pool.set(key, value);
  }
}

/** One tracked resource: its statistics, per-origin statistics and compiled rules. */
export class ResourceState {
  readonly node = new StatisticNode();
  /** The rules' state objects, kept across recompilations. */
  readonly pool = new RulePool();
  rules: ResourceRules;
  /** The resource's own rules changed since they were compiled. */
  dirty = true;
  /** The version of the inbound kinds' rules `rules` was built with. */
  inboundVersion = -1;
  /** Blocks by rule, from the resource's first block on. */
  blocks: RuleBlockCounts | undefined;
  /** Passes and blocks by the calls' priority. */
  readonly byPriority = new PriorityCounts();
  private byKind: CompiledRules[] = [];
  private named: Map<string, StatisticNode> | undefined;
  private others: LRUCache<string, StatisticNode> | undefined;
  private originSpec: ReturnType<ResourceRules['origins']>;

  constructor(
    readonly name: string,
    empty: ResourceRules,
  ) {
    this.rules = empty;
  }

  /** Compiles the resource's own rules again (when `dirty`) and rebuilds its checks. */
  refresh(services: CompileServices, inbound: readonly (CompiledRules | undefined)[], inboundVersion: number): void {
    this.blocks?.forgetRules();
    if (this.dirty) {
      this.byKind = RULE_KINDS.map((kind) =>
        kind.scope === 'resource'
          ? this.pool.compile(
              kind as unknown as RuleKind,
              this.name,
              services.rulesOf(kind as unknown as RuleKind, this.name),
              services,
            )
          : NO_RULES,
      );
      this.dirty = false;
    }
    this.rules = new ResourceRules(this.byKind, inbound);
    this.inboundVersion = inboundVersion;
    this.originSpec = this.rules.origins();
    if (this.originSpec === undefined) {
      this.named = undefined;
      this.others = undefined;
    } else if (!this.originSpec.other) {
      this.others = undefined;
    }
  }

  /**
   * The statistics of `origin` on this resource, when a rule reads them: a named origin's are
   * kept for good; any other origin's, for `'other'` rules, in an LRU of at most
   * {@link MAX_OTHER_ORIGINS} (long origins under a digest, see `boundedKey`), so rotating origin
   * values can never evict a named origin's window, nor long ones cost more than short ones.
   */
  originNode(origin: string): StatisticNode | undefined {
    const spec = this.originSpec;
    if (spec === undefined) return undefined;
    if (spec.named.has(origin)) {
      const named = (this.named ??= new Map<string, StatisticNode>());
      let node = named.get(origin);
      if (node === undefined) named.set(origin, (node = new StatisticNode('origin')));
      return node;
    }
    if (!spec.other) return undefined;
    const others = (this.others ??= new LRUCache<string, StatisticNode>({ max: MAX_OTHER_ORIGINS }));
    const key = boundedKey(origin);
    let node = others.get(key);
    if (node === undefined) others.set(key, (node = new StatisticNode('origin')));
    return node;
  }
}
