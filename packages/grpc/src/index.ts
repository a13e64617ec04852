/**
 * `@floodgate/grpc`: Floodgate for gRPC servers and clients on @grpc/grpc-js (1.10 or later).
 * A server interceptor guards each method as an inbound resource and answers blocks with gRPC
 * statuses and server pushback; a client interceptor guards each method of a server as an
 * outbound resource, with breakers, limits, the server's pushback honoured and retries within a
 * budget (through core's pushback and retry budget kinds, as the outbound HTTP guard). Streams hold
 * their entry until they end.
 * @packageDocumentation
 */
export { serverInterceptor } from './server-interceptor';
export { clientInterceptor } from './client-interceptor';
export {
  blockStatus,
  grpcCodeOf,
  blockErrorOf,
  pushbackOf,
  PUSHBACK_METADATA_KEY,
  type BlockStatus,
} from './grpc-status';
export {
  GRPC_DEFAULTS,
  type GrpcOptions,
  type ServerInterceptorOptions,
  type ClientInterceptorOptions,
  type GrpcRetryOptions,
  type GrpcPriorityMetadataOptions,
  type GrpcCallInfo,
  type ServerMethodRules,
  type ClientMethodRules,
  type MethodRateLimitOptions,
  type MethodCircuitBreakerOptions,
  type MethodHotParamOptions,
} from './grpc-options';
