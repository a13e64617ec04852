/**
 * A flaky upstream on localhost for the outbound example: a `node:http` server whose mode says
 * how it answers, and which counts the requests it saw.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the upstream answers: 200, 500 (failing), or 503 with `Retry-After: 1` (overloaded). */
export type UpstreamMode = 'healthy' | 'failing' | 'overloaded';

/** A running upstream. */
export interface FlakyUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Its resource name in the guard: `127.0.0.1:<port>`. */
  readonly host: string;
  /** How it answers from now on. */
  mode: UpstreamMode;
  /** Requests it has seen. */
  readonly requests: number;
  close(): Promise<void>;
}

/** Starts an upstream on a free loopback port. */
export async function startUpstream(name: string): Promise<FlakyUpstream> {
  let requests = 0;
  const state = { mode: 'healthy' as UpstreamMode };
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    if (state.mode === 'failing') res.writeHead(500).end(`${name} is failing`);
    else if (state.mode === 'overloaded') res.writeHead(503, { 'retry-after': '1' }).end(`${name} is overloaded`);
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ from: name }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(mode: UpstreamMode) {
      state.mode = mode;
    },
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
