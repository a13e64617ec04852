/**
 * Starts the NestJS example on a free local port and prints its URL:
 *   npx tsx --tsconfig examples/nestjs/tsconfig.json --conditions=@floodgate/source examples/nestjs/main.ts [express|fastify]
 */
import { createApp } from './app';

async function main(): Promise<void> {
  const platform = process.argv[2] === 'fastify' ? 'fastify' : 'express';
  const app = await createApp({ platform });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', 'localhost');
  console.log(`Floodgate NestJS example (${platform}) on ${url}`);
  console.log(`  curl -i ${url}/users/7 -H 'x-user-id: alice'    # the 6th within a second answers 429`);
  console.log(`  curl -i ${url}/recommendations -H 'x-user-id: alice'`);
  console.log('Ctrl-C stops it.');
}

void main();
