/**
 * examples/grpc on its own: serves the stock service on a free loopback port and calls it, in real
 * time, printing each answer:
 * 1. tenant `acme` calls `GetStock` 6 times at once: 5 pass, the 6th is refused by the server
 *    (`RESOURCE_EXHAUSTED` with its pushback); a 7th call is refused by the client, which honours
 *    the pushback, without reaching the server;
 * 2. once the pushback has passed, the database goes down: the client's breaker opens after its
 *    failures and answers locally;
 *    another client, unguarded, keeps calling until the server's own breaker opens (`UNAVAILABLE`).
 * Run: `npx tsx --conditions=@floodgate/source examples/grpc/main.ts`.
 */
import { blockErrorOf } from '@floodgate/grpc';
import { createClient, createServer, getStock, listen, Store } from './app';

function show(label: string, outcome: Awaited<ReturnType<typeof getStock>>): void {
  if (outcome.stock !== undefined) {
    console.log(`${label}: ${outcome.stock.count} in stock`);
    return;
  }
  const { code, details, metadata } = outcome.error!;
  const pushback = metadata.get('grpc-retry-pushback-ms')[0];
  const where = blockErrorOf(outcome.error) === undefined ? 'server' : 'client, locally';
  console.log(
    `${label}: code ${code} (${where}) ${details}${pushback === undefined ? '' : `, pushback ${pushback} ms`}`,
  );
}

export async function main(): Promise<void> {
  const store = new Store();
  const server = createServer({ store });
  const address = await listen(server);
  console.log(`serving inventory.Inventory on ${address}`);
  const client = createClient(address);
  const unguarded = createClient(address, { guarded: false });
  try {
    const burst = await Promise.all(Array.from({ length: 6 }, () => getStock(client, 'sku-1', 'acme')));
    burst.forEach((outcome, i) => show(`acme #${i + 1}`, outcome));
    show('acme #7', await getStock(client, 'sku-1', 'acme'));
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the pushback passes
    store.down = true;
    for (let i = 1; i <= 4; i++) show(`database down, guarded client #${i}`, await getStock(client, 'sku-1', 'shop'));
    for (let i = 1; i <= 6; i++)
      show(`database down, unguarded client #${i}`, await getStock(unguarded, 'sku-1', `t${i}`));
  } finally {
    client.close();
    unguarded.close();
    server.forceShutdown();
  }
}

if (require.main === module) void main();
