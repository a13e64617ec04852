import { connect, type Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** A raw HTTP/1.1 connection: what it sent, the statuses it got back, and how to drop it. */
export interface RawConnection {
  /** The status codes of the responses received so far, in order. */
  readonly statuses: number[];
  /** Everything received so far. */
  readonly received: () => string;
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<void>;
  /** Drops the connection at once, whatever is still pending (a client that leaves). */
  destroy(): void;
  /** Sends more bytes (the rest of a request sent slowly). */
  write(bytes: string): void;
  /** Starts reading what the server sent, for a connection opened `paused`. */
  resume(): void;
}

/** Options of {@link openRaw}. */
export interface RawOptions {
  /**
   * Reads nothing until `resume()`: a client that reads slowly. The server's answers then wait
   * in its buffers (a few MB on loopback before `finish` is delayed).
   */
  readonly paused?: boolean;
  /** The loopback address the connection comes from (`'127.0.0.2'`: another client). */
  readonly from?: string;
}

/** One request as bytes on the wire: `target` is sent exactly as given (case, escapes, absolute form). */
export function rawRequest(
  method: string,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  body = '',
): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: test'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Opens a connection to `server` and writes `payload` at once (several requests: pipelined). */
export function openRaw(server: Server, payload: string, options: RawOptions = {}): RawConnection {
  const { port } = server.address() as { port: number };
  const socket: Socket = connect({
    port,
    host: '127.0.0.1',
    ...(options.from === undefined ? {} : { localAddress: options.from }),
  });
  const statuses: number[] = [];
  let text = '';
  socket.setEncoding('latin1');
  const read = (): void => {
    socket.on('data', (chunk: string) => {
      text += chunk;
      statuses.length = 0;
      for (const match of text.matchAll(/(?:^|\r\n)HTTP\/1\.1 (\d{3}) /g)) statuses.push(Number(match[1]));
    });
  };
  if (options.paused === true) socket.pause();
  else read();
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(payload);
  return {
    statuses,
    received: () => text,
    closed,
    destroy: () => socket.destroy(),
    write: (bytes) => socket.write(bytes),
    resume: () => {
      read();
      socket.resume();
    },
  };
}

/** Sends one request on its own connection (closed by the server after the answer); resolves with its status. */
export async function sendRaw(
  server: Server,
  method: string,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  from?: string,
): Promise<number> {
  const connection = openRaw(server, rawRequest(method, target, { ...headers, Connection: 'close' }), {
    ...(from === undefined ? {} : { from }),
  });
  await connection.closed;
  return connection.statuses[0] ?? 0;
}

/** An answer too large for the loopback buffers: its response's `finish` waits for a client that does not read. */
export const BIG_ANSWER = 'x'.repeat(4 * 1024 * 1024);

/**
 * Counts the responses of `server` that their handler ended (`end()` called: Node's `prefinish`),
 * however slowly their clients read them. Call before the server takes requests.
 */
export function countEnded(server: Server): () => number {
  let ended = 0;
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.on('prefinish', () => ended++);
  });
  return () => ended;
}
