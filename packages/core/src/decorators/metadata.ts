/**
 * The metadata keys under which the decorators record what they guard, on the class (static
 * methods) or its prototype (instance methods), per method name, when `reflect-metadata` (or
 * another implementation of `Reflect.defineMetadata`) is loaded, as it is in NestJS apps. Each
 * value is frozen. Floodgate itself does not need it: `getGuardedMethods()` reads the
 * decorators' own registry, so `reflect-metadata` is optional.
 *
 * @example
 * Reflect.getOwnMetadata(DECORATOR_METADATA_KEYS.rateLimit, UserService.prototype, 'getUser');
 * // → [{ resource: 'UserService.getUser', metric: 'qps', threshold: 10, ... }]
 */
export const DECORATOR_METADATA_KEYS = Object.freeze({
  /** The method's resource name (a string). */
  resource: 'floodgate:resource',
  /** The `@RateLimit` flow rules, normalised (`FlowRule[]`). */
  rateLimit: 'floodgate:rate-limit',
  /** The `@CircuitBreaker` rules, normalised (`CircuitBreakerRule[]`). */
  circuitBreaker: 'floodgate:circuit-breaker',
  /** The `@HotParam` rules, normalised (`HotParamRule[]`). */
  hotParam: 'floodgate:hot-param',
} as const);

/** The part of the reflect-metadata API the decorators use. */
interface MetadataApi {
  defineMetadata(key: unknown, value: unknown, target: object, property?: string | symbol): void;
  getOwnMetadata(key: unknown, target: object, property?: string | symbol): unknown;
  getOwnMetadataKeys(target: object, property?: string | symbol): unknown[];
}

/** `Reflect`'s metadata API when something installed it (reflect-metadata), else `undefined`. */
function metadataApi(): MetadataApi | undefined {
  const api = Reflect as unknown as Partial<MetadataApi>;
  return typeof api.defineMetadata === 'function' &&
    typeof api.getOwnMetadata === 'function' &&
    typeof api.getOwnMetadataKeys === 'function'
    ? (api as MetadataApi)
    : undefined;
}

/** Writes Reflect metadata when the API is present; nothing otherwise. */
export function writeMetadata(key: string, value: unknown, target: object, property: string | symbol): void {
  metadataApi()?.defineMetadata(key, value, target, property);
}

/** Reads Reflect metadata (`design:returntype`, say) when the API is present. */
export function readMetadata(key: string, target: object, property: string | symbol): unknown {
  return metadataApi()?.getOwnMetadata(key, target, property);
}

/**
 * Copies the metadata other decorators put on a function (NestJS route decorators applied
 * before ours, say) onto the function that replaces it.
 */
export function copyMetadata(from: object, to: object): void {
  const api = metadataApi();
  if (api === undefined) return;
  for (const key of api.getOwnMetadataKeys(from)) api.defineMetadata(key, api.getOwnMetadata(key, from), to);
}
