/**
 * One overload example server in its own process (the load must not share its thread):
 * `node --conditions=@floodgate/source --import tsx examples/overload/server.ts <none|system|adaptive> [workMs]`.
 * Listens on 127.0.0.1 (a free port), prints `{"port":N}` and serves until SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { createApp, type Protection } from './app';

const protection = (process.argv[2] ?? 'system') as Protection;
if (!['none', 'system', 'adaptive'].includes(protection))
  throw new Error(`usage: server.ts <none|system|adaptive> [workMs], got ${protection}`);
const workMs = Number(process.argv[3] ?? 10);
const server = createApp({ protection, workMs }).listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
