import { floodgate, type Floodgate, type RunOptions } from '../engine/floodgate';
import { normalizeRuleSet } from '../engine/rule-set-input';
import { RULE_KIND_NAMES, type RuleSet, type RuleSetOptions } from '../engine/kinds';
import type { OutcomeHandlers } from '../engine/run-outcome';
import type { Entry } from '../kernel/entry';
import { RuleValidationError, type RuleIssue } from '../kernel/errors';
import type { Priority } from '../kernel/priority';
import { show } from '../kernel/rule-reader';
import { copyMetadata, DECORATOR_METADATA_KEYS, writeMetadata } from './metadata';

/**
 * Options shared by `@RateLimit`, `@CircuitBreaker` and `@HotParam`. When several of these
 * decorators are stacked on one method, each option may be given by any one of them (or
 * repeated with the same value); giving two different values is an error.
 */
export interface MethodGuardOptions {
  /**
   * The resource the method's calls are counted and limited as.
   *
   * When the rules are declared: legacy decorators (`experimentalDecorators`) see the class,
   * so they declare the rules and check handler names when the class is defined. Standard
   * decorators do not see the class of the method they decorate, so for the default resource
   * the decorators validate every option when the class is defined but declare the rules (and
   * check handler names) once the class is known: at class definition for a static method (an
   * initializer), at the first construction for an instance method (an initializer), or at
   * the first call or `getGuardedMethods()` if earlier. Give `resource` to declare at class
   * definition in both modes.
   * @defaultValue `ClassName.methodName`, the class being the one that defines the method
   */
  readonly resource?: string;
  /**
   * The engine the rules are declared on and the calls go through.
   * @defaultValue the shared `floodgate` engine
   */
  readonly floodgate?: Floodgate;
  /**
   * Answers a blocked call: `blockHandler(...args, blockError)`; its result (or its own thrown
   * error) replaces the call's. As Sentinel's `blockHandler`. The name of a method of the same
   * class (called on the same `this`: the instance, or the class for a static method), or a
   * function (called with the same `this`).
   * @defaultValue none: a block goes to `fallback`, else the `BlockError` is thrown
   */
  // Handlers take the guarded method's arguments, which a decorator factory cannot name: `any`
  // keeps `(id: string, error: BlockError) => User` assignable.
  readonly blockHandler?: string | ((...args: any[]) => unknown);
  /**
   * Answers a blocked call when there is no `blockHandler`, and a call that threw an error not
   * in `exceptionsToIgnore`: `fallback(...args, error)`; its result (or its own thrown error)
   * replaces the call's. As Sentinel's `fallback`. A method name or a function, as
   * `blockHandler`.
   * @defaultValue none: the error is thrown
   */
  readonly fallback?: string | ((...args: any[]) => unknown);
  /**
   * Errors rethrown as they are: not traced for circuit breakers and not given to `fallback`.
   * Classes (matched with `instanceof`) or a predicate. As Sentinel's `exceptionsToIgnore`.
   * @defaultValue none: every business error is traced
   */
  readonly exceptionsToIgnore?: OutcomeHandlers<unknown>['exceptionsToIgnore'];
  /**
   * Answers a call of an `async` (or promise-returning) method still unsettled after this many
   * ms with a `TimeoutError` (a failure, and a slow call, for circuit breakers): its entry exits
   * then, and the call's `AbortSignal` (not visible to the method) aborts. At most 2^31 − 1.
   * @defaultValue no timeout
   */
  readonly timeoutMs?: number;
  /**
   * Whether calls of the method enter the service from outside (a message handler, an RPC
   * endpoint): system protection rules check inbound calls only.
   * @defaultValue false
   */
  readonly inbound?: boolean;
  /**
   * The priority of the method's calls under overload: system rules and `adaptive` flow rules
   * refuse `'sheddable'` calls first and `'critical'` ones last (see `Priority`).
   * @defaultValue 'default'
   */
  readonly priority?: Priority;
}

/**
 * A method decorator that works with both of TypeScript's decorator modes: standard (TC39)
 * decorators, and legacy decorators (`experimentalDecorators`, as NestJS uses). TypeScript
 * picks the signature of the mode the project compiles with.
 */
export interface GuardDecorator {
  /** Standard (TC39) method decorator: returns the guarded method. */
  <This, Args extends unknown[], Return>(
    method: (this: This, ...args: Args) => Return,
    context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => Return>,
  ): (this: This, ...args: Args) => Return;
  /** Legacy (`experimentalDecorators`) method decorator: returns the guarded descriptor. */
  (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor;
}

/**
 * Defaults of the method decorators (`@RateLimit`, `@CircuitBreaker`, `@HotParam`). The
 * default `resource` is computed, not stored: `ClassName.methodName` of the class that defines
 * the method.
 */
export const DECORATOR_DEFAULTS = Object.freeze({
  /** The engine rules are declared on and calls are checked by: the shared engine. */
  floodgate,
  /**
   * The `paramKey` under which a `@HotParam({ param })` value is passed to the engine; a
   * second `param`-based `@HotParam` on the same method gets `param1`, a third `param2`...
   */
  paramKey: 'param',
});

/** The rule kinds a method decorator declares. */
export type GuardedRuleKind = 'flow' | 'circuitBreakers' | 'hotParams';

/** The rules a guarded method declares, by kind, validated and with defaults resolved. */
export type GuardedRules = GuardedMethodInfo['rules'];

/**
 * A `blockHandler` or `fallback`: the name of a method of the same class, or a function. It
 * receives the guarded method's arguments followed by the error.
 */
type GuardHandler = NonNullable<MethodGuardOptions['fallback']>;

/** The options several stacked decorators share: each may be given once across the stack. */
export type SharedGuardOptions = MethodGuardOptions;

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

const SHARED_KEYS = [
  'resource',
  'floodgate',
  'blockHandler',
  'fallback',
  'exceptionsToIgnore',
  'timeoutMs',
  'inbound',
  'priority',
] as const;
/** Each guarded kind's metadata key, under its route option (`@RateLimit`'s flow rules: `rateLimit`), in check order. */
const RULE_METADATA: ReadonlyArray<readonly [GuardedRuleKind, string]> = RULE_KIND_NAMES.flatMap(
  ({ key, routeOption }) =>
    routeOption !== undefined && routeOption in DECORATOR_METADATA_KEYS
      ? [
          [
            key as GuardedRuleKind,
            DECORATOR_METADATA_KEYS[routeOption as keyof typeof DECORATOR_METADATA_KEYS],
          ] as const,
        ]
      : [],
);

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
  /** Whether a call's options are its arguments alone (no param function, handler or call option given). */
  private argsOnly = true;
  private engine: Floodgate = DECORATOR_DEFAULTS.floodgate;
  private withdraw: (() => void) | undefined = undefined;
  /** The rules declared, validated, once the resource is known: the decorators' own registry. */
  private declared: GuardedRules | undefined = undefined;

  /**
   * Calls the method on its call's `this` (given to `run()` as `thisArg`) with its arguments (the
   * entry's `args`, which `callOptions` always gives): one function for every call of the method,
   * where a closure per call would cost an allocation and V8's lazy compile of its first call.
   */
  private readonly callOriginal: (this: unknown, entry: Entry) => unknown;

  constructor(
    original: (...args: unknown[]) => unknown,
    /** The method's name on its class. */
    readonly name: string | symbol,
    /** Whether the method is static. */
    readonly isStatic: boolean,
    /** Whether calls go through `Floodgate.run()` (may queue) rather than `tryEntry()` (never waits). */
    private readonly async: boolean,
  ) {
    // The wrapper gets its own `this` (the instance the method is called on).
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const guard = this;
    this.callOriginal = function (this: unknown, entry: Entry): unknown {
      return original.apply(this, entry.args as unknown[]);
    };
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
        issues.push({
          path: key,
          message: `conflicts with the ${key} given by another decorator on the same method (${show(previous)}); give it once`,
        });
      }
      merged[key] = value;
    }
    let rule = spec.rule;
    let param: ParamSource | undefined;
    if (spec.param !== undefined) {
      const key =
        spec.paramKey ??
        (this.params.length === 0
          ? DECORATOR_DEFAULTS.paramKey
          : `${DECORATOR_DEFAULTS.paramKey}${this.params.length}`);
      const same = this.params.find((p) => p.key === key);
      if (same !== undefined && same.fn !== spec.param) {
        issues.push({
          path: 'paramKey',
          message: `"${key}" is already used by another @HotParam on the same method with another param function; give each its own paramKey`,
        });
      }
      if (same === undefined) param = { key, fn: spec.param };
      rule = { ...rule, paramKey: key };
    }
    if (issues.length > 0) throw new RuleValidationError(issues, `${spec.decorator} on ${this.label}`);
    this.specs.unshift({ ...spec, rule });
    if (param !== undefined) this.params.push(param);
    this.shared = merged;
    const { blockHandler, fallback, exceptionsToIgnore, timeoutMs, inbound, priority } = merged;
    this.argsOnly =
      this.params.length === 0 &&
      [blockHandler, fallback, exceptionsToIgnore, timeoutMs, inbound, priority].every((v) => v === undefined);
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
    const declared: Record<GuardedRuleKind, Record<string, unknown>[]> = {
      flow: [],
      circuitBreakers: [],
      hotParams: [],
    };
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
    // A sync method stays sync (and never waits); one that returns a promise without being
    // `async` holds its entry until the promise settles (runSync does that).
    return this.async
      ? this.engine.run(resource, this.callOriginal, options, thisArg)
      : this.engine.runSync(resource, this.callOriginal, options, thisArg);
  }

  /** The rules this method declares, validated; `undefined` before the class is known. */
  rules(): GuardedRules | undefined {
    return this.holder === undefined ? undefined : this.declared;
  }

  private callOptions(thisArg: unknown, args: unknown[]): RunOptions<unknown> {
    // The shape a call with arguments alone gives `run()` too: one shape for both, and fewer fields to read.
    if (this.argsOnly) return { args };
    const { blockHandler, fallback, exceptionsToIgnore, timeoutMs, inbound, priority } = this.shared;
    let params: Record<string, unknown> | undefined;
    if (this.params.length > 0) {
      params = {};
      for (const source of this.params) params[source.key] = source.fn.apply(thisArg, args);
    }
    return {
      args,
      params,
      blockHandler:
        blockHandler === undefined
          ? undefined
          : (error) => this.callHandler('blockHandler', blockHandler, thisArg, args, error),
      fallback:
        fallback === undefined ? undefined : (error) => this.callHandler('fallback', fallback, thisArg, args, error),
      exceptionsToIgnore,
      timeoutMs,
      inbound,
      priority,
    };
  }

  private callHandler(
    field: string,
    handler: GuardHandler,
    thisArg: unknown,
    args: unknown[],
    error: unknown,
  ): unknown {
    const fn =
      typeof handler === 'string' ? (thisArg as Record<string, unknown> | null | undefined)?.[handler] : handler;
    if (typeof fn !== 'function') {
      throw new TypeError(
        `${this.decorators()} on ${this.label}: ${field} "${String(handler)}" is not a method of this call's \`this\``,
      );
    }
    return (fn as (...a: unknown[]) => unknown).call(thisArg, ...args, error);
  }

  private checkHandlers(owner: Function): void {
    const holder = (this.isStatic ? owner : owner.prototype) as Record<string, unknown> | undefined;
    const issues: RuleIssue[] = [];
    for (const key of ['blockHandler', 'fallback'] as const) {
      const handler = this.shared[key];
      if (typeof handler === 'string' && typeof holder?.[handler] !== 'function') {
        issues.push({
          path: key,
          message: `must name a${this.isStatic ? ' static' : 'n instance'} method of ${owner.name || 'the class'}, got "${handler}"`,
        });
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

/** One method guarded by `@RateLimit`, `@CircuitBreaker` and/or `@HotParam`. */
export interface GuardedMethodInfo {
  /** The class that defines the method (a base class for an inherited method). */
  readonly target: Function;
  /** The method's name. */
  readonly name: string | symbol;
  /** Whether the method is static. */
  readonly static: boolean;
  /** The resource its calls are counted and limited as. */
  readonly resource: string;
  /**
   * The rules its decorators declared, validated and with defaults resolved, as recorded in its
   * metadata. Rules loaded for the same kind and resource take precedence while loaded.
   */
  readonly rules: Pick<RuleSet, 'flow' | 'circuitBreakers' | 'hotParams'>;
  /** The engine its rules are declared on and its calls go through. */
  readonly floodgate: Floodgate;
}

/**
 * Lists the guarded methods of a class, or of an instance's class: instance methods, then
 * static ones, each from the class itself up through its base classes (an override hides the
 * method it overrides).
 *
 * @example
 * for (const m of getGuardedMethods(UserService)) console.log(m.resource, m.rules.flow);
 */
export function getGuardedMethods(classOrInstance: Function | object): GuardedMethodInfo[] {
  const cls =
    typeof classOrInstance === 'function'
      ? classOrInstance
      : (classOrInstance as { constructor?: unknown } | null)?.constructor;
  if (typeof cls !== 'function') throw new TypeError('getGuardedMethods() takes a class or an instance of one');
  const found: GuardedMethodInfo[] = [];
  collect(cls.prototype as object | undefined, false, found);
  collect(cls, true, found);
  return found;
}

function collect(start: object | undefined, isStatic: boolean, found: GuardedMethodInfo[]): void {
  const seen = new Set<string | symbol>();
  for (
    let holder = start;
    holder != null && holder !== Object.prototype && holder !== Function.prototype;
    holder = (Object.getPrototypeOf(holder) as object | null) ?? undefined
  ) {
    for (const key of Reflect.ownKeys(holder)) {
      if (seen.has(key)) continue;
      seen.add(key);
      const descriptor = Object.getOwnPropertyDescriptor(holder, key);
      const guard = descriptor !== undefined && 'value' in descriptor ? MethodGuard.of(descriptor.value) : undefined;
      if (guard === undefined || guard.isStatic !== isStatic) continue;
      // With standard decorators an instance method may not have met its class yet.
      if (guard.owner === undefined) {
        const owner: unknown = isStatic ? holder : (holder as { constructor?: unknown }).constructor;
        if (typeof owner === 'function') {
          guard.bind(owner);
          guard.refresh();
        }
      }
      const rules = guard.rules();
      if (guard.owner === undefined || guard.resource === undefined || rules === undefined) continue;
      found.push({
        target: guard.owner,
        name: guard.name,
        static: isStatic,
        resource: guard.resource,
        rules,
        floodgate: guard.floodgate,
      });
    }
  }
}
