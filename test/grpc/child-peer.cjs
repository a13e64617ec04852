/**
 * A gRPC peer in a process of its own, for the tests that kill one mid-call (test/grpc/*.test.ts):
 * - `node child-peer.cjs server`: serves test/grpc/echo.proto's Echo on a loopback port and prints
 *   `port <n>`; `Say` answers `{ text }` at once, except `'hold'`, which it never answers (the
 *   call is in flight when the process is killed);
 * - `node child-peer.cjs client <address>`: opens a `Chat` stream to `address`, sends one message
 *   and prints `open`; it then waits, its stream open, until it is killed.
 */
'use strict';
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { join } = require('node:path');

const { Echo } = grpc.loadPackageDefinition(protoLoader.loadSync(join(__dirname, 'echo.proto'))).floodgate.test;

if (process.argv[2] === 'server') {
  const server = new grpc.Server();
  server.addService(Echo.service, {
    say(call, callback) {
      if (call.request.text !== 'hold') callback(null, { text: call.request.text, index: 0 });
    },
    count: (call) => call.end(),
    collect: (call, callback) => callback(null, { text: '', index: 0 }),
    chat: (call) => call.end(),
  });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) throw error;
    process.stdout.write(`port ${port}\n`);
  });
} else if (process.argv[2] === 'client') {
  const client = new Echo(process.argv[3], grpc.credentials.createInsecure());
  const chat = client.chat();
  chat.on('error', () => undefined);
  chat.write({ text: 'from a child' });
  process.stdout.write('open\n');
} else {
  throw new Error('usage: node child-peer.cjs server | client <address>');
}
