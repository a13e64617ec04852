export { FloodgateModule } from './floodgate-module';
export { FloodgateInterceptor } from './floodgate-interceptor';
export { FloodgateExceptionFilter } from './floodgate-exception-filter';
export { FloodgateService, type GuardedHandler } from './floodgate-service';
export {
  RateLimit,
  CircuitBreaker,
  HotParam,
  SkipFloodgate,
  NESTJS_METADATA_KEYS,
  type HandlerDecorator,
} from './decorators';
export type {
  RateLimitOptions,
  CircuitBreakerOptions,
  HotParamOptions,
  HotParamSources,
  HotParamReader,
} from './handler-rule-options';
export { ABSENT_VALUE, ipKey } from './hot-param-values';
export {
  FLOODGATE_MODULE_DEFAULTS,
  FLOODGATE_MODULE_OPTIONS,
  type FloodgateModuleOptions,
  type FloodgateModuleAsyncOptions,
  type FloodgateModuleFactoryOptions,
  type FloodgateOptionsFactory,
  type HandlerDefaults,
} from './floodgate-module-options';
