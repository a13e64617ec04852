import { KINDS_BY_KEY, RULE_KINDS, type AnyRule, type RuleKindKey, type RuleSet } from './kinds';

/** One rule known to the engine, with where it came from, from `Floodgate.describeRules()`. */
export interface RuleDescription {
  /** The rule's kind: its key in a `RuleSet`. */
  readonly kind: RuleKindKey;
  /** The rule's resource (`''` for inbound kinds such as system rules). */
  readonly resource: string;
  /** The rule, validated and with defaults resolved. */
  readonly rule: AnyRule;
  /** `'loaded'` (`loadRules`, rule sources) or `'declared'` (decorators, middleware). */
  readonly layer: 'loaded' | 'declared';
  /** Who gave it: the `source` given to `loadRules` (`'api'` by default, `'file'`, `'redis'`, `'dashboard'`), or `'code'`. */
  readonly source: string;
  /**
   * Whether it is in force: a declared rule is not while rules of its kind loaded for its
   * resource take precedence (removing them restores it).
   */
  readonly inForce: boolean;
}

/** What a change to the store touched, so that only those resources are compiled again. */
export interface RuleChange {
  readonly kinds: readonly RuleKindKey[];
  /** The resources whose rules changed (`''` for inbound kinds' rules). */
  readonly resources: ReadonlySet<string>;
}

interface Loaded {
  readonly rules: readonly AnyRule[];
  readonly byResource: ReadonlyMap<string, readonly AnyRule[]>;
  readonly source: string;
}

type Declaration = { readonly [K in RuleKindKey]?: readonly AnyRule[] };

const EMPTY: readonly AnyRule[] = Object.freeze([]);
/** The resource a rule of `kind` is on, as its kind says (`''` for inbound kinds). */
const resourceOfRule = (kind: RuleKindKey, rule: AnyRule): string => KINDS_BY_KEY.get(kind)!.resourceOf(rule);

/**
 * The two layers of rules: rules declared in code (decorators, middleware) and rules loaded at
 * run time (`loadRules`, rule sources). For each kind and resource, loaded rules take
 * precedence over declared ones; removing them restores the declared ones.
 *
 * Indexed by kind and resource, so a change costs what it touches: declaring the rules of one
 * resource reads no other resource's rules (thousands of decorated methods or routes declare
 * in linear time), and {@link RuleStore.effective} is built only when read.
 */
export class RuleStore {
  private readonly loaded = new Map<RuleKindKey, Loaded>();
  /** Every declaration, in declaration order. */
  private readonly declarations = new Set<Declaration>();
  /** kind → resource → the declarations that give it rules, in declaration order. */
  private readonly declaredIndex = new Map<RuleKindKey, Map<string, Set<Declaration>>>();
  private cached: RuleSet | undefined;

  /** Replaces the loaded rules of one kind. */
  load(kind: RuleKindKey, rules: readonly AnyRule[], source: string): RuleChange {
    const resources = new Set<string>(this.loaded.get(kind)?.byResource.keys());
    const byResource = new Map<string, AnyRule[]>();
    for (const rule of rules) {
      const resource = resourceOfRule(kind, rule);
      let list = byResource.get(resource);
      if (list === undefined) byResource.set(resource, (list = []));
      list.push(rule);
      resources.add(resource);
    }
    this.loaded.set(kind, { rules, byResource, source });
    this.cached = undefined;
    return { kinds: [kind], resources };
  }

  /** Adds code-declared rules; `withdraw` removes them again. */
  declare(rules: Declaration): { readonly change: RuleChange; withdraw(): RuleChange } {
    const own: Declaration = { ...rules };
    this.declarations.add(own);
    const change = this.index(own, true);
    this.cached = undefined;
    return {
      change,
      withdraw: () => {
        if (!this.declarations.delete(own)) return { kinds: [], resources: new Set() };
        this.cached = undefined;
        return this.index(own, false);
      },
    };
  }

  /** The rules of `kind` in force for `resource`: the loaded ones if any were loaded for it, else the declared ones. */
  rulesOf(kind: RuleKindKey, resource: string): readonly AnyRule[] {
    const loaded = this.loaded.get(kind)?.byResource.get(resource);
    if (loaded !== undefined) return loaded;
    const declarations = this.declaredIndex.get(kind)?.get(resource);
    if (declarations === undefined) return EMPTY;
    const rules: AnyRule[] = [];
    for (const declaration of declarations)
      for (const rule of declaration[kind]!) if (resourceOfRule(kind, rule) === resource) rules.push(rule);
    return rules;
  }

  /** Whether any kind has rules in force for `resource`. */
  hasRules(resource: string): boolean {
    for (const { key } of RULE_KINDS) {
      if (
        this.loaded.get(key)?.byResource.has(resource) === true ||
        this.declaredIndex.get(key)?.has(resource) === true
      )
        return true;
    }
    return false;
  }

  /** Every rule in force, by kind (built once per change, when read). */
  effective(): RuleSet {
    this.cached ??= this.build();
    return this.cached;
  }

  /** Every rule known, loaded and declared, with where it came from and whether it is in force. */
  describe(): RuleDescription[] {
    const out: RuleDescription[] = [];
    for (const { key: kind } of RULE_KINDS) {
      const loaded = this.loaded.get(kind);
      for (const rule of loaded?.rules ?? EMPTY)
        out.push({
          kind,
          resource: resourceOfRule(kind, rule),
          rule,
          layer: 'loaded',
          source: loaded!.source,
          inForce: true,
        });
      for (const declaration of this.declarations) {
        for (const rule of declaration[kind] ?? EMPTY) {
          const resource = resourceOfRule(kind, rule);
          out.push({
            kind,
            resource,
            rule,
            layer: 'declared',
            source: 'code',
            inForce: loaded?.byResource.has(resource) !== true,
          });
        }
      }
    }
    return out;
  }

  private build(): RuleSet {
    const set: Record<string, readonly AnyRule[]> = {};
    for (const { key: kind } of RULE_KINDS) {
      const loaded = this.loaded.get(kind);
      const rules: AnyRule[] = [...(loaded?.rules ?? EMPTY)];
      for (const declaration of this.declarations) {
        for (const rule of declaration[kind] ?? EMPTY)
          if (loaded?.byResource.has(resourceOfRule(kind, rule)) !== true) rules.push(rule);
      }
      set[kind] = Object.freeze(rules);
    }
    return Object.freeze(set) as unknown as RuleSet;
  }

  private index(declaration: Declaration, add: boolean): RuleChange {
    const kinds: RuleKindKey[] = [];
    const resources = new Set<string>();
    for (const kind of Object.keys(declaration) as RuleKindKey[]) {
      const rules = declaration[kind]!;
      if (rules.length === 0) continue;
      kinds.push(kind);
      let byResource = this.declaredIndex.get(kind);
      if (byResource === undefined) this.declaredIndex.set(kind, (byResource = new Map<string, Set<Declaration>>()));
      for (const rule of rules) {
        const resource = resourceOfRule(kind, rule);
        resources.add(resource);
        let set = byResource.get(resource);
        if (add) {
          if (set === undefined) byResource.set(resource, (set = new Set()));
          set.add(declaration);
        } else if (set !== undefined) {
          set.delete(declaration);
          if (set.size === 0) byResource.delete(resource);
        }
      }
    }
    return { kinds, resources };
  }
}
