/**
 * One gRPC server process of the bench: `node bench/dist/grpc/grpc-server-worker.js <variant>`.
 * Listens on 127.0.0.1 (an ephemeral port), prints `{"port":N}` and serves until SIGTERM.
 */
import { startEchoServer } from './echo-service';
import { GRPC_VARIANTS, type GrpcVariant } from './grpc-variant';

async function main(): Promise<void> {
  const variant = process.argv[2] as GrpcVariant;
  if (!GRPC_VARIANTS.includes(variant)) throw new Error(`usage: grpc-server-worker <${GRPC_VARIANTS.join('|')}>`);
  const { server, port } = await startEchoServer(variant);
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  process.on('SIGTERM', () => {
    server.forceShutdown();
    process.exit(0);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
