import { Floodgate } from '../engine/floodgate';
import { normalizeRuleSet } from '../engine/rule-set-input';
import { RuleValidationError, type RuleIssue } from '../kernel/errors';
import { MAX_DURATION_MS, RuleReader, show } from '../kernel/rule-reader';
import { PRIORITIES } from '../kernel/priority';
import { readMetadata } from './metadata';
import {
  DECORATOR_DEFAULTS,
  MethodGuard,
  methodName,
  type GuardDecorator,
  type GuardSpec,
  type GuardedRuleKind,
} from './method-guard';

type AnyFunction = (...args: unknown[]) => unknown;

/** Where a decorator was applied, whatever the decorator mode. */
interface DecorationSite {
  readonly method: AnyFunction;
  readonly name: string | symbol;
  readonly isStatic: boolean;
  /** The class that defines the method: known with legacy decorators only. */
  readonly owner: Function | undefined;
  /** `UserService.getUser` (legacy) or `method getUser` (standard). */
  readonly label: string;
  /** Legacy decorators with `emitDecoratorMetadata`: the declared return type is `Promise`. */
  readonly returnsPromise: boolean;
  /** Legacy decorators: the method's descriptor, to update. */
  readonly descriptor?: PropertyDescriptor;
  /** Standard decorators: the decoration context. */
  readonly context?: ClassMethodDecoratorContext;
}

/** The prototypes of native async functions and of (async) generator functions. */
const ASYNC_FUNCTION_PROTOTYPE: unknown = Object.getPrototypeOf(async function () {});
const GENERATOR_PROTOTYPES: readonly unknown[] = [
  Object.getPrototypeOf(function* () {}),
  Object.getPrototypeOf(async function* () {}),
];

/**
 * @internal Builds a method decorator that declares one rule of `kind` for the method it
 * decorates and routes the method's calls through the engine. Works as a standard (TC39) and
 * as a legacy (`experimentalDecorators`) method decorator. Everything that can be checked
 * without the class is checked when the decorator is applied; the rest (handler names, the
 * default resource) as soon as the class is known.
 */
export function createGuardDecorator(decorator: string, kind: GuardedRuleKind, options: unknown): GuardDecorator {
  // A copy, so changing the options object after the fact changes nothing.
  const input = typeof options === 'object' && options !== null && !Array.isArray(options) ? { ...options } : options;
  return function floodgateGuard(...args: unknown[]): unknown {
    const site = decorationSite(decorator, args);
    const existing = MethodGuard.of(site.method);
    let guard = existing;
    try {
      if (existing === undefined) rejectGenerators(decorator, site);
      const spec = readSpec(decorator, kind, input, existing?.label ?? site.label);
      checkParamIndex(spec, site.method, existing?.label ?? site.label);
      guard ??= new MethodGuard(
        site.method,
        site.name,
        site.isStatic,
        site.returnsPromise || Object.getPrototypeOf(site.method) === ASYNC_FUNCTION_PROTOTYPE,
      );
      guard.add(spec);
      if (site.owner !== undefined) guard.bind(site.owner);
      guard.refresh();
    } catch (error) {
      // The class will not be defined: withdraw what the decorators below this one declared.
      guard?.dispose();
      throw error;
    }
    if (site.descriptor !== undefined) {
      site.descriptor.value = guard.wrapper;
      return site.descriptor;
    }
    if (existing === undefined) {
      site.context!.addInitializer(function (this: unknown) {
        guard.bindFrom(this);
      });
    }
    return guard.wrapper;
  } as GuardDecorator;
}

function decorationSite(decorator: string, args: readonly unknown[]): DecorationSite {
  const [first, second, third] = args;
  if (args.length === 2 && isContext(second)) {
    const context = second;
    const name = typeof context.name === 'symbol' ? methodName(context.name) : String(context.name);
    if (context.kind === 'class')
      throw new TypeError(`${decorator} cannot decorate class ${name}: decorate its methods`);
    const staticPrefix = context.static ? 'static ' : '';
    if (context.kind !== 'method') {
      throw new TypeError(`${decorator} can only decorate methods, not the ${staticPrefix}${context.kind} ${name}`);
    }
    if (context.private) {
      throw new TypeError(
        `${decorator} cannot decorate the private method ${name}: its class cannot be found from it; make it a regular method`,
      );
    }
    const methodContext = context as ClassMethodDecoratorContext;
    return {
      method: first as AnyFunction,
      name: methodContext.name,
      isStatic: methodContext.static,
      owner: undefined,
      label: `${staticPrefix}method ${name}`,
      returnsPromise: false,
      context: methodContext,
    };
  }
  if (
    (typeof first === 'object' || typeof first === 'function') &&
    first !== null &&
    (typeof second === 'string' || typeof second === 'symbol')
  ) {
    const isStatic = typeof first === 'function';
    const owner: unknown = isStatic ? first : (first as { constructor?: unknown }).constructor;
    const ownerName = typeof owner === 'function' && owner.name ? owner.name : '(anonymous class)';
    const label = `${ownerName}.${methodName(second)}`;
    if (typeof third === 'number')
      throw new TypeError(`${decorator} cannot decorate a parameter of ${label}: decorate the method`);
    const descriptor = third as PropertyDescriptor | undefined;
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`${decorator} can only decorate methods, not the field ${label}`);
    if (descriptor.get !== undefined || descriptor.set !== undefined) {
      throw new TypeError(`${decorator} can only decorate methods, not the accessor ${label}`);
    }
    if (typeof descriptor.value !== 'function')
      throw new TypeError(`${decorator} can only decorate methods, not ${label} (${show(descriptor.value)})`);
    return {
      method: descriptor.value as AnyFunction,
      name: second,
      isStatic,
      owner: typeof owner === 'function' ? owner : undefined,
      label,
      returnsPromise: readMetadata('design:returntype', first, second) === Promise,
      descriptor,
    };
  }
  if (args.length === 1 && typeof first === 'function') {
    throw new TypeError(
      `${decorator} cannot decorate class ${first.name || '(anonymous class)'}: decorate its methods`,
    );
  }
  throw new TypeError(`${decorator}(options) is a method decorator: write it above a class method`);
}

function isContext(value: unknown): value is DecoratorContext {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string' &&
    'name' in value
  );
}

function rejectGenerators(decorator: string, site: DecorationSite): void {
  if (GENERATOR_PROTOTYPES.includes(Object.getPrototypeOf(site.method))) {
    throw new TypeError(
      `${decorator} cannot decorate a generator method (${site.label}): its body runs after the call returns`,
    );
  }
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

/**
 * Validates one decorator's options: the shared ones here, the rule through the rule kind's
 * own normaliser (with the resource filled in), every problem reported at once.
 */
function readSpec(decorator: string, kind: GuardedRuleKind, input: unknown, label: string): GuardSpec {
  const context = `${decorator} on ${label}`;
  const reader = new RuleReader();
  const obj = reader.object(input, 'options');
  if (obj === undefined) throw new RuleValidationError(reader.issues, context);

  const resource = reader.string(obj, 'resource', '', undefined);
  if (obj.floodgate !== undefined && !((obj.floodgate as object) instanceof Floodgate)) {
    reader.fail('floodgate', `must be a Floodgate engine, got ${show(obj.floodgate)}`);
  }
  for (const key of ['blockHandler', 'fallback'] as const) {
    const value = obj[key];
    if (value !== undefined && typeof value !== 'function' && !(typeof value === 'string' && value.length > 0)) {
      reader.fail(key, `must be a method name or a function, got ${show(value)}`);
    }
  }
  const ignore = obj.exceptionsToIgnore;
  if (
    ignore !== undefined &&
    typeof ignore !== 'function' &&
    !(Array.isArray(ignore) && ignore.every((type) => typeof type === 'function'))
  ) {
    reader.fail('exceptionsToIgnore', `must be an array of error classes or a predicate, got ${show(ignore)}`);
  }
  reader.number(obj, 'timeoutMs', '', { above: 0, max: MAX_DURATION_MS }, undefined);
  reader.boolean(obj, 'inbound', '', false);
  reader.oneOf(obj, 'priority', '', PRIORITIES, 'default');

  const rule: Record<string, unknown> = { ...obj };
  for (const key of SHARED_KEYS) delete rule[key];
  let param: GuardSpec['param'];
  let paramKey: string | undefined;
  let checked = rule;
  if (kind === 'hotParams') {
    delete rule.param;
    delete rule.paramKey;
    const hasParam = obj.param !== undefined;
    if (hasParam && typeof obj.param !== 'function')
      reader.fail('param', `must be a function (...args) => value, got ${show(obj.param)}`);
    if (hasParam && obj.paramIndex !== undefined) reader.fail('param', 'give either paramIndex or param, not both');
    if (!hasParam && obj.paramIndex === undefined) {
      reader.fail('paramIndex', "is required: give paramIndex (the argument's index) or param ((...args) => value)");
    }
    if (!hasParam && obj.paramKey !== undefined)
      reader.fail('paramKey', 'names the value computed by param: give param too');
    if (hasParam) {
      param = obj.param as GuardSpec['param'];
      paramKey = obj.paramKey as string | undefined;
      // The key is settled when the decorator joins its method; any valid one checks the rest.
      checked = { ...rule, paramKey: paramKey ?? DECORATOR_DEFAULTS.paramKey };
    }
  }
  const prefix = `${kind}[0]`;
  try {
    // The resource may not be known yet (standard decorators): any name checks the rest.
    normalizeRuleSet({ [kind]: [{ ...checked, resource: resource ?? 'pending' }] });
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error;
    for (const issue of error.issues) reader.fail(unprefix(issue, prefix), issue.message);
  }
  reader.throwIfAny(context);

  const shared: Record<string, unknown> = {};
  for (const key of SHARED_KEYS) if (obj[key] !== undefined) shared[key] = obj[key];
  return { decorator, kind, rule: Object.freeze(rule), param, paramKey, shared };
}

function unprefix(issue: RuleIssue, prefix: string): string {
  if (issue.path === prefix) return 'options';
  return issue.path.startsWith(`${prefix}.`) ? issue.path.slice(prefix.length + 1) : issue.path;
}

/**
 * Refuses a `@HotParam` `paramIndex` beyond the parameters the method declares, where that is
 * certain: the rule would read an argument no call passes, and limit nothing.
 * @throws RuleValidationError naming the index and the method's parameters.
 */
function checkParamIndex(spec: GuardSpec, method: AnyFunction, label: string): void {
  const index = spec.rule.paramIndex;
  if (typeof index !== 'number') return;
  const count = declaredParameterCount(method);
  if (count === undefined || (index < count && index >= -count)) return;
  const declared = count === 0 ? 'declares no parameter' : `declares ${count} parameter${count === 1 ? '' : 's'}`;
  throw new RuleValidationError(
    [
      {
        path: 'paramIndex',
        message: `${index} is beyond the method's parameters (it ${declared}): the rule would read an argument no call passes, and limit nothing`,
      },
    ],
    `${spec.decorator} on ${label}`,
  );
}

/**
 * How many parameters a method declares, read from its source, where that is certain: no rest
 * parameter and no use of `arguments` (then a call may pass more), not native or bound, no
 * comment or regular expression among the parameters; `undefined` otherwise. Default values
 * count as declared parameters.
 */
function declaredParameterCount(method: AnyFunction): number | undefined {
  let source: string;
  try {
    source = Function.prototype.toString.call(method);
  } catch {
    return undefined;
  }
  if (source.includes('[native code]')) return undefined;
  // A computed name (`[Symbol.for('x')](a) {}`) comes before the parameters.
  let i =
    source.startsWith('[') || /^(?:async\s+|static\s+)*\[/.test(source) ? skipGroup(source, source.indexOf('[')) : 0;
  if (i < 0) return undefined;
  const open = source.indexOf('(', i);
  if (open < 0) return undefined;
  const close = skipGroup(source, open);
  if (close < 0) return undefined;
  const params = source.slice(open + 1, close - 1);
  // Regular expressions, comments, escapes and templates in default values are not read: uncertain.
  if (/[\\/`]/.test(params)) return undefined;
  if (params.includes('...') || /\barguments\b/.test(source.slice(close))) return undefined;
  let count = 0;
  let current = '';
  for (i = 0; i < params.length; i++) {
    const c = params[i]!;
    if (c === '(' || c === '[' || c === '{' || c === '"' || c === "'") {
      const end = skipGroup(params, i);
      if (end < 0) return undefined;
      current += params.slice(i, end);
      i = end - 1;
    } else if (c === ',') {
      if (current.trim() !== '') count++;
      current = '';
    } else {
      current += c;
    }
  }
  if (current.trim() !== '') count++;
  return count;
}

/** The index just after the bracket group or string literal starting at `start`, or -1. */
function skipGroup(text: string, start: number): number {
  const pairs: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };
  const stack: string[] = [];
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) return -1;
      if (stack.length === 0) return end + 1;
      i = end;
    } else if (pairs[c] !== undefined) {
      stack.push(pairs[c]);
    } else if (c === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}
