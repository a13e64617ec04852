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
