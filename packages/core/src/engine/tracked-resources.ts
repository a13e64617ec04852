import type { EventHub } from '../kernel/events';
import { MAX_RESOURCE_NAME_LENGTH, show } from '../kernel/rule-reader';
import type { Checker, CompiledRules, RuleKind } from '../kernel/rule-kind';
import { StatisticNode } from '../kernel/statistic-node';
import type { RulesOf } from './block-counts';
import type { ResolvedFloodgateOptions } from './engine-options';
import type { FloodgateEventMap } from './events';
import { KINDS_BY_KEY, RULE_KINDS, type RuleKindKey, type RuleSet } from './kinds';
import { ResourceRules, ResourceState, RulePool, type CompileServices, type ResourceInfo } from './resource-state';
import type { RuleStore } from './rule-store';

const EMPTY_RULES = new ResourceRules(
  RULE_KINDS.map(() => ({ checkers: [] })),
  [],
);

/**
 * The resources the engine tracks, each with its statistics and its rules compiled, bounded by
 * `maxResources`; and the rules of the inbound kinds, compiled once for every resource. Rules are
 * compiled when a resource is next used after they changed (`rulesChanged`).
 */
export class TrackedResources {
  /**
   * Every inbound call, all resources together (what system protection reads), counted while an
   * inbound kind has rules: an HTTP request pays for it only where it is read.
   */
  readonly inboundNode = new StatisticNode('inbound');
  /** Whether inbound calls are counted in `inboundNode` (an inbound kind has rules). */
  inboundCounted = false;
  private readonly states = new Map<string, ResourceState>();
  /**
   * The resource `stateOf` last found, and its state: a run of calls to one resource skips the
   * map's lookup (about 80 instructions of a call's 1,400). A state, once tracked, is never
   * replaced nor dropped, so the pair never goes stale.
   */
  private lastName: string | undefined;
  private lastState: ResourceState | undefined;
  /** The inbound kinds' compiled rules, by kind position (`undefined` for resource kinds). */
  private inbound: (CompiledRules | undefined)[] = RULE_KINDS.map(() => undefined);
  private readonly inboundPool = new RulePool();
  private inboundVersion = 0;
  /** The checks of an inbound call to an untracked resource. */
  private untrackedInbound = EMPTY_RULES;
  /** Resources the rules in force read besides their own (`relate`): tracked past the cap. Rebuilt when read after a change to such a kind. */
  private references: ReadonlySet<string> | undefined;
  private readonly services: CompileServices;
  private capWarned = false;

  constructor(
    private readonly options: ResolvedFloodgateOptions,
    private readonly store: RuleStore,
    private readonly events: EventHub<FloodgateEventMap>,
    rulesOf: RulesOf,
  ) {
    this.services = {
      clock: options.clock,
      random: options.random,
      events,
      cluster: options.cluster,
      kindServices: new Map(
        RULE_KINDS.map((kind) => [
          kind.key,
          (kind as RuleKind).services?.({ options: { ...options }, inbound: this.inboundNode }),
        ]),
      ),
      lookupNode: (resource) => this.states.get(resource)?.node,
      rulesOf,
    };
  }

  /** A tracked resource's state as it is (its rules possibly not compiled yet); `undefined` if untracked. */
  get(resource: string): ResourceState | undefined {
    return this.states.get(resource);
  }

  /** The names of the tracked resources. */
  names(): string[] {
    return [...this.states.keys()];
  }

  /** Each tracked resource with its state, in the order they were first tracked. */
  [Symbol.iterator](): IterableIterator<[string, ResourceState]> {
    return this.states.entries();
  }

  /** How many resources are tracked. */
  get size(): number {
    return this.states.size;
  }

  /**
   * The resource's state with its rules up to date, tracking it if it is not yet; `undefined`
   * past the resource cap.
   * @throws TypeError for a bad resource name.
   */
  stateOf(resource: string): ResourceState | undefined {
    let state = resource === this.lastName ? this.lastState : this.find(resource);
    if (state === undefined) {
      if (typeof resource !== 'string' || resource.length === 0 || resource.length > MAX_RESOURCE_NAME_LENGTH) {
        throw new TypeError(
          `resource must be a non-empty string of at most ${MAX_RESOURCE_NAME_LENGTH} characters, got ${show(resource)}`,
        );
      }
      if (this.states.size >= this.options.maxResources && !this.isPinned(resource)) {
        this.warnCapReached();
        return undefined;
      }
      state = new ResourceState(resource, EMPTY_RULES);
      this.states.set(resource, state);
      this.lastName = resource;
      this.lastState = state;
    }
    if (state.dirty || state.inboundVersion !== this.inboundVersion)
      state.refresh(this.services, this.inbound, this.inboundVersion);
    return state;
  }

  /** A tracked resource's state from the map, kept as the last found; `undefined` if untracked. */
  private find(resource: string): ResourceState | undefined {
    const state = this.states.get(resource);
    if (state !== undefined) {
      this.lastName = resource;
      this.lastState = state;
    }
    return state;
  }

  /** The state of a resource that is tracked or has rules, up to date; `undefined` otherwise (tracks nothing new without rules). */
  stateWithRules(resource: string): ResourceState | undefined {
    if (!this.states.has(resource) && !this.store.hasRules(resource)) return undefined;
    return this.stateOf(resource);
  }

  /** The checks of a call to the resource whose state is `state` (`undefined`: untracked). */
  checkersOf(state: ResourceState | undefined, inbound: boolean): readonly Checker[] {
    if (state === undefined) return inbound ? this.untrackedInbound.inboundCheckers : EMPTY_RULES.checkers;
    return inbound ? state.rules.inboundCheckers : state.rules.checkers;
  }

  /** Whether a call to the resource whose state is `state` may wait or ask a shared store. */
  mayWaitOn(state: ResourceState | undefined, inbound: boolean): boolean {
    const rules = state === undefined ? (inbound ? this.untrackedInbound : undefined) : state.rules;
    return rules !== undefined && (inbound ? rules.info.inboundMayWait : rules.info.mayWait);
  }

  /** What a resource's rules need from adapters (an untracked resource: the inbound kinds' needs). */
  infoOf(resource: string): ResourceInfo {
    return (this.stateOf(resource)?.rules ?? this.untrackedInbound).info;
  }

  /**
   * Marks what a change to the rules touched for compiling: the inbound kinds' rules at once;
   * each tracked resource at its next use, unless `now` (loaded rules take effect at once, so a
   * rule removed and loaded again starts afresh, and a replaced breaker stops announcing).
   */
  rulesChanged(kinds: ReadonlySet<RuleKindKey>, resources: ReadonlySet<string>, now: boolean): void {
    if ([...kinds].some((kind) => KINDS_BY_KEY.get(kind)!.scope === 'inbound')) this.compileInbound();
    if ([...kinds].some((kind) => KINDS_BY_KEY.get(kind)!.referenceOf !== undefined)) this.references = undefined;
    for (const resource of resources) {
      const state = this.states.get(resource);
      if (state !== undefined) state.dirty = true;
      // Compiling a loaded rule creates what it needs at once (a cluster backend's limiter).
      if (now && resource !== '' && (state !== undefined || this.store.hasRules(resource))) this.stateOf(resource);
    }
  }

  private compileInbound(): void {
    this.inbound = RULE_KINDS.map((kind) =>
      kind.scope === 'inbound'
        ? this.inboundPool.compile(kind as unknown as RuleKind, '', this.store.rulesOf(kind.key, ''), this.services)
        : undefined,
    );
    this.inboundVersion++;
    this.inboundCounted = this.inbound.some((compiled) => compiled !== undefined && compiled.checkers.length > 0);
    this.untrackedInbound = new ResourceRules(
      RULE_KINDS.map(() => ({ checkers: [] })),
      this.inbound,
    );
  }

  /** Resources tracked whatever the cap: those with rules, and those `relate` rules read. */
  private isPinned(resource: string): boolean {
    this.references ??= referencedResources(this.store.effective());
    return this.references.has(resource) || this.store.hasRules(resource);
  }

  private warnCapReached(): void {
    if (this.capWarned) return;
    this.capWarned = true;
    const message = `Floodgate tracks at most ${this.options.maxResources} resources; new resource names without rules are neither tracked nor limited. Use route templates, not raw URLs, as resource names.`;
    process.emitWarning(message, { code: 'FLOODGATE_MAX_RESOURCES' });
    this.events.emit('warning', { code: 'FLOODGATE_MAX_RESOURCES', message });
  }
}

/** The resources the rules in force read besides their own (see `RuleKind.referenceOf`). */
function referencedResources(rules: RuleSet): ReadonlySet<string> {
  const references = new Set<string>();
  for (const kind of RULE_KINDS as readonly RuleKind[]) {
    if (kind.referenceOf === undefined) continue;
    for (const rule of rules[kind.key as RuleKindKey] as readonly object[]) {
      const reference = kind.referenceOf(rule);
      if (reference !== undefined) references.add(reference);
    }
  }
  return references;
}
