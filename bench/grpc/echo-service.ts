/**
 * The gRPC bench's service (bench/grpc/echo.proto, loaded with @grpc/proto-loader) and the
 * variants measured: bare grpc-js, one pass-through interceptor (what grpc-js's interceptor
 * machinery costs by itself), and Floodgate's interceptor with the rules an HTTP route has in the
 * HTTP suite (a QPS limit, a breaker and a per-user hotspot limit, none of which refuses).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Floodgate } from '@floodgate/core';
import { clientInterceptor, serverInterceptor } from '@floodgate/grpc';
import type { GrpcVariant } from './grpc-variant';

/** The method's path. */
export const SAY = '/bench.Echo/Say';

/** Distinct callers the load cycles through (`x-user-id`), as in the HTTP suite. */
export const BENCH_USERS = 1000;

interface EchoClient extends grpc.Client {
  say(request: { text: string }, metadata: grpc.Metadata, callback: grpc.requestCallback<{ text: string }>): unknown;
}

type EchoConstructor = (new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => EchoClient) & {
  service: grpc.ServiceDefinition;
};

// Beside this file in bench/grpc; from bench/dist/grpc (the compiled workers), two folders up.
const PROTO = [join(__dirname, 'echo.proto'), join(__dirname, '..', '..', 'grpc', 'echo.proto')].find((p) =>
  existsSync(p),
)!;
const { Echo } = (
  grpc.loadPackageDefinition(protoLoader.loadSync(PROTO)) as unknown as {
    bench: { Echo: EchoConstructor };
  }
).bench;

/** The rules of the guarded variants (none refuses); the server adds a per-user hotspot rule. */
export const RULES = {
  rateLimit: { threshold: 1e9 },
  circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 },
} as const;

/** A server of the service for `variant`, bound to a free loopback port; resolves to the port. */
export async function startEchoServer(variant: GrpcVariant): Promise<{ server: grpc.Server; port: number }> {
  const interceptors: grpc.ServerInterceptor[] =
    variant === 'bare'
      ? []
      : variant === 'noop'
        ? [(_method, call) => new grpc.ServerInterceptingCall(call)]
        : [
            serverInterceptor({
              floodgate: new Floodgate(),
              methods: { [SAY]: { ...RULES, hotParam: { param: 'metadata:x-user-id', threshold: 1e9 } } },
            }),
          ];
  const server = new grpc.Server({ interceptors });
  server.addService(Echo.service, {
    say(
      call: grpc.ServerUnaryCall<{ text: string }, { text: string }>,
      callback: grpc.sendUnaryData<{ text: string }>,
    ) {
      callback(null, { text: call.request.text });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return { server, port };
}

/** A client of the service at `address` for `variant`. */
export function echoClient(address: string, variant: GrpcVariant): EchoClient {
  const interceptors: grpc.Interceptor[] =
    variant === 'bare'
      ? []
      : variant === 'noop'
        ? [(options, next) => new grpc.InterceptingCall(next(options))]
        : [clientInterceptor({ floodgate: new Floodgate(), target: address, eachMethod: RULES })];
  return new Echo(address, grpc.credentials.createInsecure(), { interceptors });
}

/** One unary call as caller `user`. */
export function say(client: EchoClient, metadata: grpc.Metadata): Promise<void> {
  return new Promise((resolve, reject) =>
    client.say({ text: 'hello' }, metadata, (error) => (error ? reject(error) : resolve())),
  );
}
