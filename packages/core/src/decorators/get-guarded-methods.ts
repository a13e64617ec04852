import type { Floodgate } from '../engine/floodgate';
import { MethodGuard, type GuardedRules } from './method-guard';

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
  readonly rules: GuardedRules;
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
  const cls = typeof classOrInstance === 'function' ? classOrInstance : (classOrInstance as { constructor?: unknown } | null)?.constructor;
  if (typeof cls !== 'function') throw new TypeError('getGuardedMethods() takes a class or an instance of one');
  const found: GuardedMethodInfo[] = [];
  collect(cls.prototype as object | undefined, false, found);
  collect(cls, true, found);
  return found;
}

function collect(start: object | undefined, isStatic: boolean, found: GuardedMethodInfo[]): void {
  const seen = new Set<string | symbol>();
  for (let holder = start; holder != null && holder !== Object.prototype && holder !== Function.prototype; holder = Object.getPrototypeOf(holder) as object | null ?? undefined) {
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
      found.push({ target: guard.owner, name: guard.name, static: isStatic, resource: guard.resource, rules, floodgate: guard.floodgate });
    }
  }
}
