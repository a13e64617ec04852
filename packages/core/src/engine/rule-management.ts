import { RuleValidationError } from '../kernel/errors';
import type { EventHub } from '../kernel/events';
import { show } from '../kernel/rule-reader';
import type { FloodgateEventMap } from './events';
import { KINDS_BY_KEY, RULE_KINDS, type AnyRule, type RuleKindKey, type RuleSet, type RuleSetOptions } from './kinds';
import { normalizeRuleSet } from './rule-set-input';
import type { RuleChange, RuleStore } from './rule-store';
import type { TrackedResources } from './tracked-resources';

/** Options of `loadRules()`. */
export interface LoadOptions {
  /**
   * Who loads the rules, as `describeRules()` and `rulesLoaded` report it: `'file'`, `'redis'`,
   * `'dashboard'`, or any name.
   * @defaultValue 'api'
   */
  readonly source?: string;
  /**
   * Kinds the rule set replaces whole: each one listed that the set lacks is emptied, in the
   * same step (a file's version that dropped a kind, a dashboard edit, which is the whole loaded
   * layer). The set is validated as given first, so a refused set empties nothing.
   * @defaultValue [] (only the kinds the set holds are replaced)
   */
  readonly replaces?: readonly RuleKindKey[];
}

/**
 * Rule management: rules loaded and declared go into the store, validated first (a rejected set
 * is announced and changes nothing); each change is announced (`rulesLoaded`) and marks what it
 * touched for compiling.
 */
export class RuleManagement {
  constructor(
    private readonly store: RuleStore,
    private readonly resources: TrackedResources,
    private readonly events: EventHub<FloodgateEventMap>,
  ) {}

  /** See `Floodgate.loadRules`. */
  load(rules: RuleSetOptions, options: LoadOptions | undefined): Partial<RuleSet> {
    const source = sourceOf(options);
    const replaces = replacesOf(options);
    const set = this.validated(() => normalizeRuleSet(rules), source);
    const changes = (Object.keys(set) as RuleKindKey[]).map((kind) =>
      this.store.load(kind, set[kind]! as readonly AnyRule[], source),
    );
    for (const kind of replaces) if (set[kind] === undefined) changes.push(this.store.load(kind, [], source));
    this.applied(changes, source);
    return set;
  }

  /** See `Floodgate.declareRules`. */
  declare(rules: RuleSetOptions): () => void {
    const declaration = this.store.declare(normalizeRuleSet(rules));
    this.applied([declaration.change], 'code');
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.applied([declaration.withdraw()], 'code');
    };
  }

  /** See `Floodgate.reportRejectedRules`. */
  reportRejected(error: RuleValidationError, options: LoadOptions | undefined): void {
    this.events.emit('rulesRejected', { issues: error.issues, error, source: sourceOf(options) });
  }

  /** Validates rules to load; a rejected set emits `rulesRejected` (rule sources report with it). */
  private validated<T>(normalize: () => T, source: string): T {
    try {
      return normalize();
    } catch (error) {
      if (error instanceof RuleValidationError)
        this.events.emit('rulesRejected', { issues: error.issues, error, source });
      throw error;
    }
  }

  /**
   * Announces a change and compiles what it touched: loaded rules take effect at once (so a rule
   * removed and loaded again starts afresh, and a replaced breaker stops announcing); declared
   * rules (thousands at boot) are compiled at the resource's next use, once per batch.
   */
  private applied(changes: readonly RuleChange[], source: string): void {
    const kinds = new Set<RuleKindKey>();
    const resources = new Set<string>();
    for (const change of changes) {
      for (const kind of change.kinds) kinds.add(kind);
      for (const resource of change.resources) resources.add(resource);
    }
    this.resources.rulesChanged(kinds, resources, source !== 'code');
    if (this.events.has('rulesLoaded')) {
      const store = this.store;
      this.events.emit('rulesLoaded', {
        get rules() {
          return store.effective();
        },
        kinds: [...kinds],
        resources: [...resources],
        source,
      });
    }
  }
}

function sourceOf(options: LoadOptions | undefined): string {
  const source = options?.source ?? 'api';
  if (typeof source !== 'string' || source.length === 0 || source.length > 100) {
    throw new TypeError(
      `loadRules options.source must be a non-empty string of at most 100 characters, got ${show(source)}`,
    );
  }
  return source;
}

function replacesOf(options: LoadOptions | undefined): readonly RuleKindKey[] {
  const replaces: unknown = options?.replaces ?? [];
  if (!Array.isArray(replaces) || replaces.some((kind) => !KINDS_BY_KEY.has(kind as string))) {
    throw new TypeError(
      `loadRules options.replaces must be an array of rule kinds (${RULE_KINDS.map((kind) => kind.key).join(', ')}), got ${show(replaces)}`,
    );
  }
  return replaces as readonly RuleKindKey[];
}
