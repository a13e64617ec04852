/**
 * The upstream of the outbound suite, a process of its own (pinned to the server core, so its
 * CPU is never the caller's): `/ok` answers 200 with a short body, `/fail` 503; `/count` answers
 * how many `/fail` requests it saw. Prints its port as one line.
 *
 * Usage: node bench/dist/outbound/outbound-server.js
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let failures = 0;
const server = createServer((req, res) => {
  req.resume();
  if (req.url === '/fail') {
    failures++;
    res.writeHead(503, { 'content-length': '4' }).end('down');
  } else if (req.url === '/count') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ failures }));
  } else {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' }).end('{"ok":true}');
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
