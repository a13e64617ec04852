/** What a gRPC bench run guards its calls with (bench/grpc/echo-service.ts builds each). */
export const GRPC_VARIANTS = ['bare', 'noop', 'floodgate'] as const;
export type GrpcVariant = (typeof GRPC_VARIANTS)[number];
