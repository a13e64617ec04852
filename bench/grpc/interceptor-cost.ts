/**
 * The interceptors' own CPU cost per unary call, in-process and without a network:
 * `node bench/dist/grpc/interceptor-cost.js <calls>`. Each call goes through grpc-js's own
 * interceptor classes (`ServerInterceptingCall`, `InterceptingCall`) down to a stand-in for the
 * transport that answers at once: the metadata, one message and the half-close in, one message
 * and an OK status out, as a unary call does. Measured for no interceptor (the stand-in alone),
 * a pass-through interceptor and Floodgate's (the rules of the end-to-end runs), in batches of
 * `calls` with the variants alternating; prints one JSON line of the median CPU µs per call of
 * each. What the end-to-end runs cannot resolve on a busy machine (a few µs in about 70 of the
 * rest of a call) this measures alone.
 */
import * as grpc from '@grpc/grpc-js';
import { Floodgate } from '@floodgate/core';
import { clientInterceptor, serverInterceptor } from '@floodgate/grpc';
import { median } from '../lib/median';
import { RULES, SAY } from './echo-service';
import { GRPC_VARIANTS, type GrpcVariant } from './grpc-variant';

/** The median CPU µs per call of each variant, server side and client side. */
export interface InterceptorCost {
  readonly server: Readonly<Record<GrpcVariant, number>>;
  readonly client: Readonly<Record<GrpcVariant, number>>;
}

type ServerCall = grpc.ServerInterceptingCallInterface;
type Listener = Parameters<ServerCall['start']>[0];
type ClientCall = ReturnType<grpc.NextCall>;

const METHOD: grpc.ServerMethodDefinition<unknown, unknown> = {
  path: SAY,
  requestStream: false,
  responseStream: false,
  requestDeserialize: (buffer) => buffer,
  responseSerialize: (value) => value as Buffer,
};
const REQUEST = { text: 'hello' };
/** Calls completed (a status sent, or received): each batch checks that every call completed. */
let completed = 0;

/** The transport side of one server call: delivers a unary request at once, counts what is sent back. */
function transportCall(metadata: grpc.Metadata): ServerCall {
  let listener: Listener | undefined;
  return {
    start(l) {
      listener = l;
      l.onReceiveMetadata(metadata);
    },
    startRead() {
      listener!.onReceiveMessage(REQUEST);
      listener!.onReceiveHalfClose();
    },
    sendMetadata() {},
    sendMessage(_message, callback) {
      callback();
    },
    sendStatus(status) {
      if (status.code === grpc.status.OK) completed++;
      listener!.onCancel(); // grpc-js tells a call's listeners it ended once its status is sent
    },
    getPeer: () => '127.0.0.1:1',
    getDeadline: () => Infinity,
    getHost: () => 'localhost',
    getAuthContext: () => ({}),
    getConnectionInfo: () => ({}),
    getMetricsRecorder: () => undefined as never,
  };
}

/** What grpc-js's unary handler does with a call: reads the request, answers it. */
function handle(call: ServerCall): void {
  call.start({
    onReceiveMetadata: () => call.startRead(),
    onReceiveMessage: () => undefined,
    onReceiveHalfClose: () => call.sendMessage(REQUEST, () => call.sendStatus({ code: grpc.status.OK, details: 'OK' })),
    onCancel: () => undefined,
  });
}

const OK_STATUS: grpc.StatusObject = { code: grpc.status.OK, details: 'OK', metadata: new grpc.Metadata() };

/** The channel side of one client call: answers the request at once with a message and OK. */
function channelCall(): ClientCall {
  let listener: Parameters<ClientCall['start']>[1];
  return {
    cancelWithStatus() {},
    getPeer: () => '127.0.0.1:1',
    start(_metadata, l) {
      listener = l;
    },
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {
      listener?.onReceiveMetadata?.(OK_STATUS.metadata);
      listener?.onReceiveMessage?.(REQUEST);
      listener?.onReceiveStatus?.(OK_STATUS);
    },
    getAuthContext: () => null,
  };
}

function serverRunner(variant: GrpcVariant): (metadata: grpc.Metadata) => void {
  if (variant === 'bare') return (metadata) => handle(transportCall(metadata));
  const interceptor: grpc.ServerInterceptor =
    variant === 'noop'
      ? (_method, call) => new grpc.ServerInterceptingCall(call)
      : serverInterceptor({
          floodgate: new Floodgate(),
          methods: { [SAY]: { ...RULES, hotParam: { param: 'metadata:x-user-id', threshold: 1e9 } } },
        });
  return (metadata) => handle(interceptor(METHOD, transportCall(metadata)));
}

function clientRunner(variant: GrpcVariant): (metadata: grpc.Metadata) => void {
  const options = { method_definition: { path: SAY } } as grpc.InterceptorOptions;
  const interceptor: grpc.Interceptor | undefined =
    variant === 'bare'
      ? undefined
      : variant === 'noop'
        ? (o, next) => new grpc.InterceptingCall(next(o))
        : clientInterceptor({ floodgate: new Floodgate(), target: '127.0.0.1:1', eachMethod: RULES });
  const listener = {
    onReceiveStatus: (status: grpc.StatusObject) => void (status.code === grpc.status.OK && completed++),
  };
  return (metadata) => {
    const call: ClientCall = interceptor === undefined ? channelCall() : interceptor(options, () => channelCall());
    call.start(metadata, listener);
    call.sendMessage(REQUEST);
    call.halfClose();
  };
}

function cpuUsPerCall(
  run: (metadata: grpc.Metadata) => void,
  metadata: readonly grpc.Metadata[],
  calls: number,
): number {
  const before = completed;
  const started = process.cpuUsage();
  for (let i = 0; i < calls; i++) run(metadata[i % metadata.length]!);
  const spent = process.cpuUsage(started);
  if (completed - before !== calls) throw new Error(`${completed - before} of ${calls} calls completed with OK`);
  return (spent.user + spent.system) / calls;
}

function main(): void {
  const calls = Number(process.argv[2] ?? 100_000);
  const metadata = Array.from({ length: 1000 }, (_, i) => {
    const m = new grpc.Metadata();
    m.set('x-user-id', `user-${i}`);
    return m;
  });
  const measure = (make: (variant: GrpcVariant) => (metadata: grpc.Metadata) => void): Record<GrpcVariant, number> => {
    const runners = GRPC_VARIANTS.map((variant) => [variant, make(variant)] as const);
    for (const [, run] of runners) cpuUsPerCall(run, metadata, calls); // warm-up
    const samples = new Map<GrpcVariant, number[]>(GRPC_VARIANTS.map((v) => [v, []]));
    for (let pass = 0; pass < 5; pass++) {
      const order = pass % 2 === 0 ? runners : [...runners].reverse();
      for (const [variant, run] of order) samples.get(variant)!.push(cpuUsPerCall(run, metadata, calls));
    }
    return Object.fromEntries(GRPC_VARIANTS.map((v) => [v, median(samples.get(v)!)])) as Record<GrpcVariant, number>;
  };
  const result: InterceptorCost = { server: measure(serverRunner), client: measure(clientRunner) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
