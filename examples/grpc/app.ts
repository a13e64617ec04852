/**
 * A gRPC stock service guarded by Floodgate, and a client of it, from inventory.proto loaded with
 * @grpc/proto-loader:
 * - the server is guarded by one `interceptors: [serverInterceptor(...)]` option: `GetStock` takes
 *   at most 5 calls per second per tenant (the `x-tenant` metadata key), past which it answers
 *   `RESOURCE_EXHAUSTED` (HTTP's 429) with `grpc-retry-pushback-ms`; every method has a breaker that
 *   opens when half its calls fail, answering `UNAVAILABLE` (HTTP's 503) with the time left;
 *   `WatchStock` streams hold their slot while open, at most 100 at once;
 * - the client is guarded by `clientInterceptor()`: a breaker per method that opens after 3
 *   failures, so a failing server is not called at all while it is open (answered locally with
 *   `UNAVAILABLE`), and the server's pushback is honoured (no call to the method until it passed).
 * `createServer()` does not listen and `createClient()` does not connect until called: see main.ts
 * (`npx tsx --conditions=@floodgate/source examples/grpc/main.ts`) and test/examples/grpc.test.ts.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { Floodgate } from '@floodgate/core';
import { clientInterceptor, serverInterceptor } from '@floodgate/grpc';

/** A stock level, as the service answers it. */
export interface Stock {
  sku: string;
  count: number;
}

/** The client of the service, as proto-loader makes it. */
export interface InventoryClient extends grpc.Client {
  getStock(
    request: { sku: string },
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<Stock>,
  ): grpc.ClientUnaryCall;
  watchStock(request: { sku: string }, metadata?: grpc.Metadata): grpc.ClientReadableStream<Stock>;
}

type InventoryConstructor = (new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => InventoryClient) & { service: grpc.ServiceDefinition };

const { Inventory } = (
  grpc.loadPackageDefinition(protoLoader.loadSync(join(__dirname, 'inventory.proto'))) as unknown as {
    inventory: { Inventory: InventoryConstructor };
  }
).inventory;

/** The methods' paths, which name the server's resources. */
export const GET_STOCK = '/inventory.Inventory/GetStock';
export const WATCH_STOCK = '/inventory.Inventory/WatchStock';

/** The stock, and whether the database behind it is down. */
export class Store extends EventEmitter<{ change: [Stock] }> {
  /** When true, every lookup fails (`INTERNAL`). */
  down = false;
  private readonly counts = new Map<string, number>([
    ['sku-1', 12],
    ['sku-2', 0],
  ]);

  get(sku: string): number {
    return this.counts.get(sku) ?? 0;
  }

  set(sku: string, count: number): void {
    this.counts.set(sku, count);
    this.emit('change', { sku, count });
  }
}

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** The server's engine. @defaultValue a new one */
  readonly floodgate?: Floodgate;
  /** The stock. @defaultValue a new store */
  readonly store?: Store;
}

/** The service, guarded; not bound to a port (see {@link listen}). */
export function createServer(options: ServerOptions = {}): grpc.Server {
  const store = options.store ?? new Store();
  const server = new grpc.Server({
    interceptors: [
      serverInterceptor({
        floodgate: options.floodgate ?? new Floodgate(),
        methods: {
          [GET_STOCK]: { hotParam: { param: 'metadata:x-tenant', threshold: 5 } },
          [WATCH_STOCK]: { rateLimit: { metric: 'concurrency', threshold: 100 } },
        },
        eachMethod: {
          circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, minRequestAmount: 5, retryTimeoutMs: 10_000 },
        },
      }),
    ],
  });
  server.addService(Inventory.service, {
    getStock(call: grpc.ServerUnaryCall<{ sku: string }, Stock>, callback: grpc.sendUnaryData<Stock>) {
      if (store.down) callback({ code: grpc.status.INTERNAL, details: 'the stock database is unreachable' });
      else callback(null, { sku: call.request.sku, count: store.get(call.request.sku) });
    },
    watchStock(call: grpc.ServerWritableStream<{ sku: string }, Stock>) {
      const { sku } = call.request;
      const onChange = (stock: Stock): void => void (stock.sku === sku && call.write(stock));
      call.write({ sku, count: store.get(sku) });
      store.on('change', onChange);
      call.on('cancelled', () => store.off('change', onChange));
    },
  });
  return server;
}

/** Binds `server` on 127.0.0.1 (`port` 0: a free one); resolves to its address. */
export async function listen(server: grpc.Server, port = 0): Promise<string> {
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return `127.0.0.1:${bound}`;
}

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The client's engine. @defaultValue a new one */
  readonly floodgate?: Floodgate;
  /** Whether calls go through Floodgate's client interceptor. @defaultValue true */
  readonly guarded?: boolean;
}

/** A client of the service at `address`, its calls guarded by a breaker per method. */
export function createClient(address: string, options: ClientOptions = {}): InventoryClient {
  const interceptors =
    options.guarded === false
      ? []
      : [
          clientInterceptor({
            floodgate: options.floodgate ?? new Floodgate(),
            target: address,
            eachMethod: {
              circuitBreaker: { strategy: 'errorCount', threshold: 2, minRequestAmount: 3, retryTimeoutMs: 5000 },
            },
          }),
        ];
  return new Inventory(address, grpc.credentials.createInsecure(), { interceptors });
}

/** One `GetStock` call as tenant `tenant`: its stock, or its error. */
export function getStock(
  client: InventoryClient,
  sku: string,
  tenant: string,
): Promise<{ stock?: Stock; error?: grpc.ServiceError }> {
  const metadata = new grpc.Metadata();
  metadata.set('x-tenant', tenant);
  return new Promise((resolve) =>
    client.getStock({ sku }, metadata, (error, stock) => resolve(error ? { error } : { stock: stock! })),
  );
}
