import type { HotParamRuleOptions } from '../hot-param/hot-param-rule';
import { createGuardDecorator } from './create-guard-decorator';
import type { GuardDecorator } from './guard-decorator';
import type { MethodGuardOptions } from './method-guard-options';

/** The hotspot rule's options a decorator takes: all but what names the resource and the parameter. */
type HotParamDecoratorRule = Omit<HotParamRuleOptions, 'resource' | 'paramIndex' | 'paramKey'> & MethodGuardOptions;

/** `@HotParam` limiting per value of one argument. */
export interface HotParamByIndexOptions extends HotParamDecoratorRule {
  /** The argument's index; negative counts from the end. */
  readonly paramIndex: number;
  readonly param?: undefined;
  readonly paramKey?: undefined;
}

/** `@HotParam` limiting per value computed from the arguments. */
export interface HotParamByValueOptions extends HotParamDecoratorRule {
  /**
   * Computes the value to limit by from the method's arguments (called with the method's
   * `this`); `undefined` or `null` leaves the call unlimited by the rule.
   */
  // The method's arguments cannot be named by a decorator factory; `any` lets `(id: string) => id` in.
  readonly param: (...args: any[]) => unknown;
  /**
   * The name the value is passed to the engine under (the declared rule's `paramKey`); a
   * loaded rule for the resource may use it.
   * @defaultValue 'param' (then 'param1', 'param2'... for further `param` hotspots on the method)
   */
  readonly paramKey?: string;
  readonly paramIndex?: undefined;
}

/** Options of {@link HotParam}: a hotspot rule without `resource`, with `paramIndex` or `param`, plus the method guard options. */
export type HotParamDecoratorOptions = HotParamByIndexOptions | HotParamByValueOptions;

/**
 * Limits a method per distinct value of a parameter (a user id, a tenant, a SKU) with a hotspot
 * rule, declared on the engine as a code-declared rule for the method's resource
 * (`ClassName.methodName` by default). With `paramIndex` the engine reads the argument; with
 * `param` the decorator computes the value on each call and passes it under `paramKey`. A
 * blocked call goes to `blockHandler`, else `fallback`, else throws a `HotParamBlockError`.
 *
 * @throws RuleValidationError (`ERR_INVALID_RULE`) when the decorator is applied with invalid
 * options (including neither or both of `paramIndex` and `param`) or a
 * `blockHandler`/`fallback` name that is not a method of the class, naming the method. A
 * `TypeError` when applied to anything but a method.
 * @example
 * class UserService {
 *   @HotParam({ param: (userId: string) => userId, paramKey: 'userId', threshold: 5, blockHandler: 'slowDown' })
 *   async getProfile(userId: string): Promise<Profile> { ... }
 *   slowDown(userId: string, error: BlockError): Profile { ... }
 * }
 */
export function HotParam(options: HotParamDecoratorOptions): GuardDecorator {
  return createGuardDecorator('@HotParam', 'hotParams', options);
}
