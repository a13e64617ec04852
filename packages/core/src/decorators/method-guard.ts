import type { CircuitBreakerRule } from '../circuit-breaker/circuit-breaker-rule';
import { normalizeRuleSet, type Floodgate, type RunOptions } from '../engine/floodgate';
import type { RuleSetOptions } from '../engine/kinds';
import type { ErrorMatcher } from '../engine/run-outcome';
import type { FlowRule } from '../flow/flow-rule';
import type { HotParamRule } from '../hot-param/hot-param-rule';
import { RuleValidationError, type RuleIssue } from '../kernel/errors';
import { show } from '../kernel/rule-reader';
import { DECORATOR_DEFAULTS } from './decorator-defaults';
import { copyMetadata, DECORATOR_METADATA_KEYS, writeMetadata } from './metadata';
import type { GuardHandler } from './method-guard-options';

/** The rule kinds a method decorator declares. */
export type GuardedRuleKind = 'flow' | 'circuitBreakers' | 'hotParams';

/** The rules a guarded method declares, by kind, validated and with defaults resolved. */
export interface GuardedRules {
  readonly flow: readonly FlowRule[];
  readonly circuitBreakers: readonly CircuitBreakerRule[];
  readonly hotParams: readonly HotParamRule[];
}

/** The options several stacked decorators share: each may be given once across the stack. */
export interface SharedGuardOptions {
  readonly resource?: string;
  readonly floodgate?: Floodgate;
  readonly blockHandler?: GuardHandler;
  readonly fallback?: GuardHandler;
  readonly exceptionsToIgnore?: ErrorMatcher;
  readonly timeoutMs?: number;
  readonly inbound?: boolean;
}

/** One decorator's contribution to a guarded method, already validated. */
export interface GuardSpec {
  /** `'@RateLimit'`, `'@CircuitBreaker'` or `'@HotParam'`, for messages. */
  readonly decorator: string;
  readonly kind: GuardedRuleKind;
  /** The rule's options without `resource` (and, for `param`-based hotspots, without `paramKey`). */
  readonly rule: Readonly<Record<string, unknown>>;
  /** `@HotParam({ param })`: computes the value from the arguments. */
  readonly param: ((...args: unknown[]) => unknown) | undefined;
  /** `@HotParam({ param, paramKey })`: the name the value is passed under. */
  readonly paramKey: string | undefined;
  readonly shared: SharedGuardOptions;
}

interface ParamSource {
  readonly key: string;
  readonly fn: (...args: unknown[]) => unknown;
}

const SHARED_KEYS = ['resource', 'floodgate', 'blockHandler', 'fallback', 'exceptionsToIgnore', 'timeoutMs', 'inbound'] as const;
const RULE_METADATA: ReadonlyArray<readonly [GuardedRuleKind, string]> = [
  ['flow', DECORATOR_METADATA_KEYS.rateLimit],
  ['circuitBreakers', DECORATOR_METADATA_KEYS.circuitBreaker],
  ['hotParams', DECORATOR_METADATA_KEYS.hotParam],
];

const GUARDS = new WeakMap<object, MethodGuard>();

/**
 * @internal The state of one decorated method: the rules of every decorator stacked on it, the
 * one wrapper that replaces it, and the call path (one entry per call, whatever the stack).
 *
 * The class that defines the method (hence the default resource `ClassName.methodName`) is
 * known at decoration time with legacy decorators, but not with standard ones: there it is
 * found later, by {@link MethodGuard.bindFrom}, at the first of: class definition (static
 * methods), first construction (instance methods), first call, `getGuardedMethods()`.
 */
export class MethodGuard {
  /** The guard whose wrapper `fn` is, if any. */
  static of(fn: unknown): MethodGuard | undefined {
    return typeof fn === 'function' ? GUARDS.get(fn) : undefined;
  }

  /** The function that replaces the method on its class. */
  readonly wrapper: (this: unknown, ...args: unknown[]) => unknown;
  /** The class that defines the method, once known. */
  owner: Function | undefined = undefined;
  /** The resource, once known (given, or computed from the class). */
  resource: string | undefined = undefined;

  private readonly specs: GuardSpec[] = [];
  private readonly params: ParamSource[] = [];
  private shared: SharedGuardOptions = {};
  private engine: Floodgate = DECORATOR_DEFAULTS.floodgate;
  private withdraw: (() => void) | undefined = undefined;
  /** The rules declared, validated, once the resource is known: the decorators' own registry. */
  private declared: GuardedRules | undefined = undefined;

  constructor(
    private readonly original: (...args: unknown[]) => unknown,
    /** The method's name on its class. */
    readonly name: string | symbol,
    /** Whether the method is static. */
    readonly isStatic: boolean,
    /** Whether calls go through `Floodgate.run()` (may queue) rather than `tryEntry()` (never waits). */
    private readonly async: boolean,
  ) {
    const guard = this;
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      return guard.invoke(this, args);
    };
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
    // Metadata other decorators put on the function (NestJS route decorators applied before
    // this one, say) must survive the swap.
    copyMetadata(original, wrapper);
    this.wrapper = wrapper;
    GUARDS.set(wrapper, this);
  }

  /** `UserService.getUser` once the class is known, else `method getUser`. */
  get label(): string {
    return this.labelFor(this.owner);
  }

  /** The object the method lives on: the class for a static method, else its prototype. */
  get holder(): object | undefined {
    if (this.owner === undefined) return undefined;
    return this.isStatic ? this.owner : (this.owner.prototype as object);
  }

  /** The engine the method's calls go through. */
  get floodgate(): Floodgate {
    return this.engine;
  }

  /**
   * Adds one decorator's rule and options. Nothing changes when it throws.
   * @throws RuleValidationError when a shared option conflicts with another decorator's.
   */
  add(spec: GuardSpec): void {
    const issues: RuleIssue[] = [];
    const merged: Record<string, unknown> = { ...this.shared };
    for (const key of SHARED_KEYS) {
      const value = spec.shared[key];
      if (value === undefined) continue;
      const previous = merged[key];
      if (previous !== undefined && previous !== value) {
        issues.push({ path: key, message: `conflicts with the ${key} given by another decorator on the same method (${show(previous)}); give it once` });
      }
      merged[key] = value;
    }
    let rule = spec.rule;
    let param: ParamSource | undefined;
    if (spec.param !== undefined) {
      const key = spec.paramKey ?? (this.params.length === 0 ? DECORATOR_DEFAULTS.paramKey : `${DECORATOR_DEFAULTS.paramKey}${this.params.length}`);
      const same = this.params.find((p) => p.key === key);
      if (same !== undefined && same.fn !== spec.param) {
        issues.push({ path: 'paramKey', message: `"${key}" is already used by another @HotParam on the same method with another param function; give each its own paramKey` });
      }
      if (same === undefined) param = { key, fn: spec.param };
      rule = { ...rule, paramKey: key };
    }
    if (issues.length > 0) throw new RuleValidationError(issues, `${spec.decorator} on ${this.label}`);
    this.specs.unshift({ ...spec, rule });
    if (param !== undefined) this.params.push(param);
    this.shared = merged;
    this.engine = this.shared.floodgate ?? DECORATOR_DEFAULTS.floodgate;
    if (this.shared.resource !== undefined) this.resource = this.shared.resource;
  }

  /**
   * Records the class that defines the method and resolves the default resource. Nothing
   * changes when it throws.
   * @throws TypeError when the class has no name and no `resource` was given.
   * @throws RuleValidationError when a handler name is not a method of the class.
   */
  bind(owner: Function): void {
    if (this.owner !== undefined) return;
    if (this.shared.resource === undefined && !owner.name) {
      throw new TypeError(`${this.decorators()} on ${this.label}: the class has no name; give a resource`);
    }
    this.checkHandlers(owner);
    this.owner = owner;
    this.resource = this.shared.resource ?? `${owner.name}.${methodName(this.name)}`;
  }

  /**
   * With standard decorators: finds the class that defines the method from a `this` (an
   * instance, or the class for a static method), binds to it and declares the rules. Quiet
   * when the class cannot be found; {@link MethodGuard.invoke} then reports it.
   * @throws as {@link MethodGuard.bind}, after withdrawing the rules declared so far.
   */
  bindFrom(thisArg: unknown): void {
    if (this.owner !== undefined) return;
    const owner = this.findOwner(thisArg);
    if (owner === undefined) return;
    try {
      this.bind(owner);
      this.refresh();
    } catch (error) {
      this.dispose();
      throw error;
    }
  }

  /**
   * Checks handler names against the class (once known), records the metadata and
   * (re)declares the rules on the engine (once the resource is known).
   * @throws RuleValidationError when a handler name is not a method of the class.
   */
  refresh(): void {
    if (this.owner !== undefined) this.checkHandlers(this.owner);
    const holder = this.holder;
    const resource = this.resource;
    if (resource === undefined) return;
    const declared: Record<GuardedRuleKind, Record<string, unknown>[]> = { flow: [], circuitBreakers: [], hotParams: [] };
    for (const spec of this.specs) declared[spec.kind].push({ ...spec.rule, resource });
    const rules = normalizeRuleSet(declared) as unknown as GuardedRules;
    this.dispose();
    this.withdraw = this.engine.declareRules(declared as unknown as RuleSetOptions);
    this.declared = rules;
    if (holder !== undefined) {
      writeMetadata(DECORATOR_METADATA_KEYS.resource, resource, holder, this.name);
      for (const [kind, key] of RULE_METADATA) writeMetadata(key, rules[kind], holder, this.name);
    }
  }

  /** Withdraws the declared rules (a decoration that failed leaves nothing behind). */
  dispose(): void {
    this.withdraw?.();
    this.withdraw = undefined;
  }

  /** One call of the guarded method: one entry, whatever the number of stacked decorators. */
  invoke(thisArg: unknown, args: unknown[]): unknown {
    if (this.owner === undefined) {
      this.bindFrom(thisArg);
      if (this.resource === undefined) {
        throw new TypeError(
          `${this.decorators()} on ${this.label}: cannot tell which class defines the method from this call's \`this\`; ` +
            'call it on an instance (or the class), keep floodgate decorators closest to the method, or give a resource',
        );
      }
    }
    const resource = this.resource!;
    const options = this.callOptions(thisArg, args);
    const original = this.original;
    const call = (): unknown => original.apply(thisArg, args);
    // A sync method stays sync (and never waits); one that returns a promise without being
    // `async` holds its entry until the promise settles (runSync does that).
    return this.async ? this.engine.run(resource, call, options) : this.engine.runSync(resource, call, options);
  }

  /** The rules this method declares, validated; `undefined` before the class is known. */
  rules(): GuardedRules | undefined {
    return this.holder === undefined ? undefined : this.declared;
  }

  private callOptions(thisArg: unknown, args: unknown[]): RunOptions<unknown> {
    const { blockHandler, fallback, exceptionsToIgnore, timeoutMs, inbound } = this.shared;
    let params: Record<string, unknown> | undefined;
    if (this.params.length > 0) {
      params = {};
      for (const source of this.params) params[source.key] = source.fn.apply(thisArg, args);
    }
    return {
      args,
      params,
      blockHandler: blockHandler === undefined ? undefined : (error) => this.callHandler('blockHandler', blockHandler, thisArg, args, error),
      fallback: fallback === undefined ? undefined : (error) => this.callHandler('fallback', fallback, thisArg, args, error),
      exceptionsToIgnore,
      timeoutMs,
      inbound,
    };
  }

  private callHandler(field: string, handler: GuardHandler, thisArg: unknown, args: unknown[], error: unknown): unknown {
    const fn = typeof handler === 'string' ? (thisArg as Record<string, unknown> | null | undefined)?.[handler] : handler;
    if (typeof fn !== 'function') {
      throw new TypeError(`${this.decorators()} on ${this.label}: ${field} "${String(handler)}" is not a method of this call's \`this\``);
    }
    return (fn as (...a: unknown[]) => unknown).call(thisArg, ...args, error);
  }

  private checkHandlers(owner: Function): void {
    const holder = (this.isStatic ? owner : owner.prototype) as Record<string, unknown> | undefined;
    const issues: RuleIssue[] = [];
    for (const key of ['blockHandler', 'fallback'] as const) {
      const handler = this.shared[key];
      if (typeof handler === 'string' && typeof holder?.[handler] !== 'function') {
        issues.push({ path: key, message: `must name a${this.isStatic ? ' static' : 'n instance'} method of ${owner.name || 'the class'}, got "${handler}"` });
      }
    }
    if (issues.length > 0) throw new RuleValidationError(issues, `${this.decorators()} on ${this.labelFor(owner)}`);
  }

  private findOwner(thisArg: unknown): Function | undefined {
    for (let obj = thisArg; obj !== null && obj !== undefined; obj = Object.getPrototypeOf(obj)) {
      if (Object.getOwnPropertyDescriptor(obj, this.name)?.value !== this.wrapper) continue;
      const owner = this.isStatic ? obj : (obj as { constructor?: unknown }).constructor;
      return typeof owner === 'function' ? owner : undefined;
    }
    return undefined;
  }

  private labelFor(owner: Function | undefined): string {
    const method = methodName(this.name);
    if (owner !== undefined) return `${owner.name || '(anonymous class)'}.${method}`;
    return `${this.isStatic ? 'static method' : 'method'} ${method}`;
  }

  private decorators(): string {
    const names = [...new Set(this.specs.map((spec) => spec.decorator))];
    return names.length === 0 ? '@floodgate' : names.join(' ');
  }
}

/** A method name as it appears in a resource: `getUser`, or `[Symbol.description]`. */
export function methodName(name: string | symbol): string {
  return typeof name === 'symbol' ? `[${name.description ?? ''}]` : name;
}
