import { connect, type Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { EventCount } from '../support/event-count';

/** A raw HTTP/1.1 connection: what it sent, the statuses it got back, and how to drop it. */
export interface RawConnection {
  /** The status codes of the responses received so far, in order. */
  readonly statuses: number[];
  /** Everything received so far. */
  readonly received: () => string;
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<void>;
  /** Resolves once `count` responses have begun to arrive (their status lines; at once if they have). */
  answered(count: number): Promise<void>;
  /** Resolves once at least `length` characters have been received (at once if they have). */
  receives(length: number): Promise<void>;
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
  /** Waits on what has been received, each woken by the data that completes it. */
  const waits: { readonly done: () => boolean; readonly resolve: () => void }[] = [];
  const waitFor = (done: () => boolean): Promise<void> =>
    done() ? Promise.resolve() : new Promise((resolve) => waits.push({ done, resolve }));
  socket.setEncoding('latin1');
  const read = (): void => {
    socket.on('data', (chunk: string) => {
      text += chunk;
      statuses.length = 0;
      for (const match of text.matchAll(/(?:^|\r\n)HTTP\/1\.1 (\d{3}) /g)) statuses.push(Number(match[1]));
      for (let i = waits.length - 1; i >= 0; i--) {
        if (!waits[i]!.done()) continue;
        waits.splice(i, 1)[0]!.resolve();
      }
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
    answered: (count) => waitFor(() => statuses.length >= count),
    receives: (length) => waitFor(() => text.length >= length),
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

/** What the responses of a server told, counted by listeners of the test's own (see {@link watchResponses}). */
export interface ResponseEvents {
  /** Responses their handler ended (`end()` called: Node's `prefinish`), however slowly their clients read them. */
  readonly ended: EventCount;
  /**
   * Responses closed (`close`): read whole by their client, or cut off by its leaving. Floodgate
   * gives a request's slot back on this event; a wait on the count continues after that.
   */
  readonly closed: EventCount;
  /**
   * Connections closed on the server's side: a pipelined request whose response waits behind
   * another has no `close` of its own, and gives its slot back on this one.
   */
  readonly connectionsClosed: EventCount;
}

/**
 * Counts the events of the responses and connections of `server`, so a test waits for them.
 * Call before the server takes connections.
 */
export function watchResponses(server: Server): ResponseEvents {
  const events: ResponseEvents = {
    ended: new EventCount(),
    closed: new EventCount(),
    connectionsClosed: new EventCount(),
  };
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.on('prefinish', () => events.ended.add());
    res.on('close', () => events.closed.add());
  });
  server.prependListener('connection', (socket: Socket) => {
    socket.on('close', () => events.connectionsClosed.add());
  });
  return events;
}
