import { RULE_KINDS, type RuleKind, type RuleSet } from './rule-set';

const EMPTY: RuleSet = Object.freeze({ authority: [], hotParams: [], flow: [], circuitBreakers: [] });

/**
 * The two layers of rules: rules declared in code (decorators, middleware) and rules loaded
 * at run time (`loadRules`, rule sources). For each kind and resource, loaded rules take
 * precedence over declared ones; removing them restores the declared ones.
 */
export class RuleRegistry {
  private loaded: Partial<RuleSet> = {};
  private readonly declared = new Set<Partial<RuleSet>>();

  /** Replaces the loaded rules of each kind present in `rules`. */
  load(rules: Partial<RuleSet>): void {
    this.loaded = { ...this.loaded, ...rules };
  }

  /** Adds code-declared rules; returns a function that withdraws them. */
  declare(rules: Partial<RuleSet>): () => void {
    const own = { ...rules };
    this.declared.add(own);
    return () => {
      this.declared.delete(own);
    };
  }

  /** The rules in force, by kind. */
  effective(): RuleSet {
    if (this.declared.size === 0 && Object.keys(this.loaded).length === 0) return EMPTY;
    const result: Record<string, unknown[]> = {};
    for (const kind of RULE_KINDS) result[kind] = this.effectiveOf(kind);
    return result as unknown as RuleSet;
  }

  private effectiveOf(kind: RuleKind): unknown[] {
    const loaded: readonly { readonly resource: string }[] = this.loaded[kind] ?? [];
    const loadedResources = new Set(loaded.map((rule) => rule.resource));
    const rules: unknown[] = [...loaded];
    for (const declaration of this.declared) {
      for (const rule of declaration[kind] ?? []) if (!loadedResources.has(rule.resource)) rules.push(rule);
    }
    return rules;
  }
}
