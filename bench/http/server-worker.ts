/**
 * One HTTP server process: `node bench/dist/http/server-worker.js <framework> <variant>`.
 * Listens on 127.0.0.1 (an ephemeral port), prints `{"port":N}` and serves until SIGTERM.
 */
import { startServer } from './start-server';

async function main(): Promise<void> {
  const { server, port } = await startServer(process.argv[2] ?? '', process.argv[3] ?? '');
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  process.on('SIGTERM', () => {
    server.closeAllConnections?.();
    server.close(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
