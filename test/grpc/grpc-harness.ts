/**
 * A real grpc-js server and client on loopback for the gRPC tests, over test/grpc/echo.proto
 * loaded with @grpc/proto-loader. The server's handlers answer at once, unless the request's
 * `text` asks otherwise: `'fail:<code>'` fails with that status code, `'pushback:<value>'` (unary) fails with
 * `RESOURCE_EXHAUSTED` and that `grpc-retry-pushback-ms`, `'script'` (unary and server streaming)
 * answers with the next of the server's `script` outcomes (OK once it is empty), `'hold'` keeps the call open
 * (a unary, server-streaming or client-streaming call whose first message says so) for the test
 * to drive through its {@link HeldCall}. Every `Chat` (bidi) call is held. Every call a handler
 * sees is counted in `handled`, and `running` is how many handlers are in flight now (its most is
 * kept in `mostRunning`), to check what a limit let through.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { spawn, type ChildProcess } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Floodgate } from '@floodgate/core';
import { clientInterceptor, type ClientInterceptorOptions } from '@floodgate/grpc';
import { until } from '../support/until';

/** The request message, as proto-loader gives it (camelCase fields). */
export interface EchoRequest {
  text?: string;
  userId?: string;
  count?: number;
  caller?: { tenant?: string };
}

/** The reply message. */
export interface EchoReply {
  text: string;
  index: number;
}

/** The service's methods as a client sees them. */
export interface EchoClient extends grpc.Client {
  say(request: EchoRequest, callback: grpc.requestCallback<EchoReply>): grpc.ClientUnaryCall;
  say(
    request: EchoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<EchoReply>,
  ): grpc.ClientUnaryCall;
  count(
    request: EchoRequest,
    metadata?: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<EchoReply>;
  collect(callback: grpc.requestCallback<EchoReply>): grpc.ClientWritableStream<EchoRequest>;
  collect(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<EchoReply>,
  ): grpc.ClientWritableStream<EchoRequest>;
  chat(metadata?: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<EchoRequest, EchoReply>;
}

type EchoClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => EchoClient;

/** The path of the test service's methods. */
export const PATHS = Object.freeze({
  say: '/floodgate.test.Echo/Say',
  count: '/floodgate.test.Echo/Count',
  collect: '/floodgate.test.Echo/Collect',
  chat: '/floodgate.test.Echo/Chat',
});

const PROTO = join(__dirname, 'echo.proto');
const definition = protoLoader.loadSync(PROTO);
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  floodgate: { test: { Echo: EchoClientConstructor & { service: grpc.ServiceDefinition } } };
};

/** The test service, loaded from echo.proto. */
export const Echo = loaded.floodgate.test.Echo;

/** A call a handler holds open for the test to drive. */
export interface HeldCall {
  readonly method: 'say' | 'count' | 'collect' | 'chat';
  readonly metadata: grpc.Metadata;
  /** The messages the handler received so far. */
  readonly messages: EchoRequest[];
  /** Whether the client half-closed. */
  readonly ended: () => boolean;
  /** Whether the call was cancelled (by the client, its deadline or the connection). */
  readonly cancelled: () => boolean;
  /** Sends a reply message (streaming responses). */
  write(reply: EchoReply): void;
  /** Ends the call with OK (unary and client-streaming calls: with `reply`). */
  finish(reply?: EchoReply): void;
  /** Ends the call with a status. */
  fail(code: grpc.status): void;
}

/** What a `'script'` call is answered with: a status code, its pushback, and (server streaming) messages sent first. */
export interface ScriptedOutcome {
  readonly code: grpc.status;
  /** The `grpc-retry-pushback-ms` value sent with a failed status. */
  readonly pushback?: string;
  /** Reply messages a `Count` call sends before its status. @defaultValue 0 */
  readonly messages?: number;
}

/** A running server and what its handlers saw. */
export interface EchoServer {
  readonly server: grpc.Server;
  readonly port: number;
  readonly address: string;
  /** Calls that reached a handler, by method. */
  readonly handled: Record<HeldCall['method'], number>;
  /** The calls held open, oldest first (kept after they end). */
  readonly held: HeldCall[];
  /** What the next `'script'` calls are answered with, in order; each is taken by one call. */
  readonly script: ScriptedOutcome[];
  /** Handlers in flight now. */
  running(): number;
  /** The most handlers in flight at once so far. */
  mostRunning(): number;
  /** Stops the server at once: calls in flight end. */
  close(): Promise<void>;
}

/** What the handlers' calls of every shape have. */
type ServerCall = EventEmitter & { readonly metadata: grpc.Metadata };

function failWith(code: grpc.status, metadata?: grpc.Metadata): grpc.ServerErrorResponse {
  return Object.assign(new Error(`failed with ${grpc.status[code]}`), { code, ...(metadata ? { metadata } : {}) });
}

/** `'pushback:<value>'`: RESOURCE_EXHAUSTED with `grpc-retry-pushback-ms: <value>`, as a server of its own would answer. */
function pushbackFailure(text: string): grpc.ServerErrorResponse | undefined {
  if (!text.startsWith('pushback:')) return undefined;
  const metadata = new grpc.Metadata();
  metadata.set('grpc-retry-pushback-ms', text.slice('pushback:'.length));
  return failWith(grpc.status.RESOURCE_EXHAUSTED, metadata);
}

/** The failure a scripted outcome answers with, `undefined` for OK. */
function scriptedFailure(outcome: ScriptedOutcome | undefined): grpc.ServerErrorResponse | undefined {
  if (outcome === undefined || outcome.code === grpc.status.OK) return undefined;
  if (outcome.pushback === undefined) return failWith(outcome.code);
  const metadata = new grpc.Metadata();
  metadata.set('grpc-retry-pushback-ms', outcome.pushback);
  return failWith(outcome.code, metadata);
}

function failureCode(text: string | undefined): grpc.status | undefined {
  const match = /^fail:(\d+)$/.exec(text ?? '');
  return match === null ? undefined : (Number(match[1]) as grpc.status);
}

/** Starts an Echo server on a loopback port, guarded by `interceptors`. */
export async function startEchoServer(interceptors: grpc.ServerInterceptor[] = []): Promise<EchoServer> {
  const server = new grpc.Server({ interceptors });
  const handled = { say: 0, count: 0, collect: 0, chat: 0 };
  const held: HeldCall[] = [];
  const script: ScriptedOutcome[] = [];
  let running = 0;
  let most = 0;
  /** Counts a handler in flight from now until its call ends, once. */
  const track = (call: ServerCall): (() => void) => {
    running++;
    most = Math.max(most, running);
    let done = false;
    const stop = (): void => {
      if (done) return;
      done = true;
      running--;
    };
    call.on('cancelled', stop);
    return stop;
  };
  const hold = (
    method: HeldCall['method'],
    call: ServerCall,
    stop: () => void,
    respond: {
      write?: (reply: EchoReply) => void;
      finish: (reply?: EchoReply) => void;
      fail: (code: grpc.status) => void;
    },
    messages: EchoRequest[],
  ): HeldCall => {
    let ended = false;
    let cancelled = false;
    call.on('end', () => (ended = true));
    call.on('cancelled', () => (cancelled = true));
    const record: HeldCall = {
      method,
      metadata: call.metadata,
      messages,
      ended: () => ended,
      cancelled: () => cancelled,
      write: (reply) => respond.write!(reply),
      finish: (reply) => {
        stop();
        respond.finish(reply);
      },
      fail: (code) => {
        stop();
        respond.fail(code);
      },
    };
    held.push(record);
    return record;
  };
  server.addService(Echo.service, {
    say(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
      handled.say++;
      const stop = track(call);
      const { text = '' } = call.request;
      const code = failureCode(text);
      if (text === 'hold') {
        hold(
          'say',
          call,
          stop,
          {
            finish: (reply) => callback(null, reply ?? { text: 'held', index: 0 }),
            fail: (failed) => callback(failWith(failed)),
          },
          [call.request],
        );
        return;
      }
      stop();
      if (text === 'script') {
        const failure = scriptedFailure(script.shift());
        if (failure !== undefined) callback(failure);
        else callback(null, { text, index: handled.say });
        return;
      }
      const pushback = pushbackFailure(text);
      if (pushback !== undefined) callback(pushback);
      else if (code !== undefined) callback(failWith(code));
      else callback(null, { text, index: 0 });
    },
    count(call: grpc.ServerWritableStream<EchoRequest, EchoReply>) {
      handled.count++;
      const stop = track(call);
      const { text = '', count = 0 } = call.request;
      if (text === 'hold') {
        hold(
          'count',
          call,
          stop,
          {
            write: (reply) => call.write(reply),
            finish: () => call.end(),
            fail: (failed) => call.emit('error', failWith(failed)),
          },
          [call.request],
        );
        return;
      }
      if (text === 'script') {
        const outcome = script.shift();
        for (let i = 0; i < (outcome?.messages ?? 0); i++) call.write({ text, index: i });
        stop();
        const failure = scriptedFailure(outcome);
        if (failure !== undefined) call.emit('error', failure);
        else call.end();
        return;
      }
      for (let i = 0; i < count; i++) call.write({ text, index: i });
      stop();
      const code = failureCode(text);
      if (code !== undefined) call.emit('error', failWith(code));
      else call.end();
    },
    collect(call: grpc.ServerReadableStream<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
      handled.collect++;
      const stop = track(call);
      const messages: EchoRequest[] = [];
      let record: HeldCall | undefined;
      call.on('data', (message: EchoRequest) => {
        messages.push(message);
        if (messages.length === 1 && message.text === 'hold')
          record = hold(
            'collect',
            call,
            stop,
            {
              finish: (reply) => callback(null, reply ?? { text: 'held', index: 0 }),
              fail: (failed) => callback(failWith(failed)),
            },
            messages,
          );
      });
      call.on('end', () => {
        if (record !== undefined) return;
        stop();
        const code = failureCode(messages[0]?.text);
        if (code !== undefined) callback(failWith(code));
        else callback(null, { text: messages.map((m) => m.text).join(','), index: messages.length });
      });
    },
    chat(call: grpc.ServerDuplexStream<EchoRequest, EchoReply>) {
      handled.chat++;
      const stop = track(call);
      const messages: EchoRequest[] = [];
      call.on('data', (message: EchoRequest) => messages.push(message));
      hold(
        'chat',
        call,
        stop,
        {
          write: (reply) => call.write(reply),
          finish: () => call.end(),
          fail: (failed) => call.emit('error', failWith(failed)),
        },
        messages,
      );
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    server,
    port,
    address: `127.0.0.1:${port}`,
    handled,
    held,
    script,
    running: () => running,
    mostRunning: () => most,
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** A client of the Echo service at `address`, through `interceptors`. */
export function echoClient(address: string, interceptors: grpc.Interceptor[] = []): EchoClient {
  return new Echo(address, grpc.credentials.createInsecure(), { interceptors });
}

/** The outcome of a unary call: its reply, or its error. */
export function sayOutcome(
  client: EchoClient,
  request: EchoRequest,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<{ reply?: EchoReply; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    client.say(request, metadata, options, (error, reply) => resolve(error ? { error } : { reply: reply! }));
  });
}

/** Metadata with these entries. */
export function metadataOf(entries: Record<string, string>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return metadata;
}

/**
 * The status a client stream ended with (its `status` event). Its `error` event, which carries
 * the same failed status, is listened to (an unheard `error` event would throw).
 */
export function statusOf(call: {
  on(event: 'status', listener: (status: grpc.StatusObject) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}): Promise<grpc.StatusObject> {
  call.on('error', () => undefined);
  return new Promise((resolve) => call.on('status', resolve));
}

/** Waits until the server holds `count` calls (their handlers have seen them). */
export function untilHeld(server: EchoServer, count: number): Promise<void> {
  return until(() => server.held.length >= count, `${count} held calls`);
}

/** A gRPC peer in a child process (test/grpc/child-peer.cjs), and the first line it printed. */
export interface ChildPeer {
  readonly child: ChildProcess;
  readonly line: string;
  /** Kills the process (SIGKILL: no goodbye on its connections) and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts test/grpc/child-peer.cjs with `args` and waits for its first line. */
export async function startChildPeer(...args: string[]): Promise<ChildPeer> {
  const child = spawn(process.execPath, [join(__dirname, 'child-peer.cjs'), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) resolve(output.slice(0, output.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`child-peer.cjs ${args.join(' ')} exited with ${code}`)));
  });
  return {
    child,
    line,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Waits until no resource of `engine` holds a slot: every call made so far gave its slot back. */
export function untilSlotsReleased(engine: Floodgate): Promise<void> {
  return until(
    () => engine.resourceNames().every((name) => engine.stats(name)?.concurrency === 0),
    'every slot released',
  );
}

/** A client test's Echo server and the clients it made, fresh for each test (see {@link clientTestbed}). */
export interface ClientTestbed {
  /** The test's server, once `connect` started it. */
  readonly server: EchoServer;
  /**
   * Starts an Echo server (unguarded, or through `serverInterceptors`) and a client of it through
   * the client interceptor on the engine; `resource(path)` is the interceptor's resource of a method.
   */
  connect(
    options?: Omit<ClientInterceptorOptions, 'floodgate' | 'target'>,
    serverInterceptors?: grpc.ServerInterceptor[],
  ): Promise<{ c: EchoClient; resource: (path: string) => string }>;
  /** A client the test made itself, closed after the test as the testbed's own are. */
  adopt(client: EchoClient): EchoClient;
}

/**
 * The Echo server and guarded clients of each test in the calling `describe`, on the engine
 * `engine()` returns then. It registers an `afterEach`: however the test ended, once every call
 * it made gave its slot back, its clients close, then its server.
 */
export function clientTestbed(engine: () => Floodgate): ClientTestbed {
  let server: EchoServer | undefined;
  let clients: EchoClient[] = [];
  afterEach(async () => {
    await untilSlotsReleased(engine());
    for (const client of clients) client.close();
    await server?.close();
    clients = [];
    server = undefined;
  });
  const testbed: ClientTestbed = {
    get server(): EchoServer {
      if (server === undefined) throw new Error('no server yet: call connect() first');
      return server;
    },
    async connect(options = {}, serverInterceptors = []) {
      server = await startEchoServer(serverInterceptors);
      const target = server.address;
      const c = testbed.adopt(echoClient(target, [clientInterceptor({ floodgate: engine(), target, ...options })]));
      return { c, resource: (path) => `${target}${path}` };
    },
    adopt(client) {
      clients.push(client);
      return client;
    },
  };
  return testbed;
}
