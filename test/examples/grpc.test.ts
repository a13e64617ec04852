import * as grpc from '@grpc/grpc-js';
import { CircuitOpenError, Floodgate, UpstreamPausedError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { blockErrorOf } from '@floodgate/grpc';
import {
  createClient,
  createServer,
  getStock,
  GET_STOCK,
  listen,
  Store,
  WATCH_STOCK,
  type InventoryClient,
  type Stock,
} from '../../examples/grpc/app';
import { until } from '../support/until';

describe('examples/grpc', () => {
  let serverClock: ManualClock;
  let clientClock: ManualClock;
  let serverEngine: Floodgate;
  let clientEngine: Floodgate;
  let store: Store;
  let server: grpc.Server;
  let address: string;
  const clients: InventoryClient[] = [];

  beforeEach(async () => {
    serverClock = new ManualClock(1000);
    clientClock = new ManualClock(1000);
    serverEngine = new Floodgate({ clock: serverClock });
    clientEngine = new Floodgate({ clock: clientClock });
    store = new Store();
    server = createServer({ floodgate: serverEngine, store });
    address = await listen(server);
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    server.forceShutdown();
  });

  function client(guarded = true): InventoryClient {
    const made = createClient(address, { floodgate: clientEngine, guarded });
    clients.push(made);
    return made;
  }

  it('answers a tenant past its 5 calls a second with RESOURCE_EXHAUSTED and a pushback, which the client honours', async () => {
    const c = client();
    for (let i = 0; i < 5; i++) expect((await getStock(c, 'sku-1', 'acme')).stock).toEqual({ sku: 'sku-1', count: 12 });
    const refused = await getStock(c, 'sku-1', 'acme');
    expect(refused.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // The tenant's bucket refills once a full second has passed (Sentinel counts in whole ms: 1001).
    expect(refused.error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['1001']);
    const paused = await getStock(c, 'sku-1', 'globex');
    expect(blockErrorOf(paused.error)).toBeInstanceOf(UpstreamPausedError);
    expect(serverEngine.totals(GET_STOCK)).toMatchObject({ pass: 5, block: 1 });
    await clientClock.advance(1001);
    expect((await getStock(c, 'sku-1', 'globex')).stock?.count).toBe(12);
  });

  it('opens the client’s breaker on a failing server, then answers locally', async () => {
    const c = client();
    store.down = true;
    for (let i = 0; i < 3; i++) expect((await getStock(c, 'sku-1', 'shop')).error?.code).toBe(grpc.status.INTERNAL);
    const local = await getStock(c, 'sku-1', 'shop');
    expect(local.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(blockErrorOf(local.error)).toBeInstanceOf(CircuitOpenError);
    expect(serverEngine.totals(GET_STOCK)).toMatchObject({ pass: 3, error: 3 });
    expect(clientEngine.circuitState(`${address}${GET_STOCK}`)[0]?.state).toBe('open');
  });

  it('answers UNAVAILABLE with the time left while the server’s breaker is open', async () => {
    const c = client(false);
    store.down = true;
    for (let i = 0; i < 5; i++) expect((await getStock(c, 'sku-1', `t${i}`)).error?.code).toBe(grpc.status.INTERNAL);
    const { error } = await getStock(c, 'sku-1', 't5');
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(error?.details).toContain('ERR_CIRCUIT_OPEN');
    expect(error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['10000']);
    store.down = false;
    await serverClock.advance(10_000);
    expect((await getStock(c, 'sku-1', 't6')).stock?.count).toBe(12);
  });

  it('streams stock changes, the stream holding its slot until the client cancels it', async () => {
    const watch = client().watchStock({ sku: 'sku-2' });
    const seen: Stock[] = [];
    watch.on('data', (stock: Stock) => seen.push(stock));
    watch.on('error', () => undefined);
    await until(() => seen.length === 1, 'the current stock');
    store.set('sku-2', 4);
    await until(() => seen.length === 2, 'the change');
    expect(seen).toEqual([
      { sku: 'sku-2', count: 0 },
      { sku: 'sku-2', count: 4 },
    ]);
    expect(serverEngine.stats(WATCH_STOCK)?.concurrency).toBe(1);
    watch.cancel();
    await until(() => serverEngine.stats(WATCH_STOCK)?.concurrency === 0, 'the server slot released');
    expect(clientEngine.stats(`${address}${WATCH_STOCK}`)?.concurrency).toBe(0);
    expect(store.listenerCount('change')).toBe(0);
  });

  it('builds its own engines when given none', async () => {
    const own = createServer();
    const ownAddress = await listen(own);
    const c = createClient(ownAddress);
    try {
      expect((await getStock(c, 'sku-1', 'acme')).stock?.count).toBe(12);
    } finally {
      c.close();
      own.forceShutdown();
    }
  });
});
