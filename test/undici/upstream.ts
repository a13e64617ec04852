import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the upstream does with one request. */
export type Behaviour =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string }
  /** Destroys the connection before answering (`ECONNRESET` / `UND_ERR_SOCKET` at the caller). */
  | 'reset'
  /** Never answers (until the caller aborts, or the server closes). */
  | 'hang';

/**
 * A real `node:http` server on loopback that answers each request as its script says (the next
 * scripted behaviour, else `fallback`), counting what it saw: requests, requests in flight, and
 * open connections.
 */
export class Upstream {
  /** Requests received, in order, by path. */
  readonly seen: string[] = [];
  /** Requests whose answer has not finished or whose connection has not closed. */
  inFlight = 0;
  fallback: Behaviour = { status: 200, body: 'ok' };
  private readonly queue: Behaviour[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => this.answer(req, res));
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts one on a free loopback port. */
  static async start(): Promise<Upstream> {
    const upstream = new Upstream();
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port>` */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The resource the guard names this upstream by. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Requests received. */
  get hits(): number {
    return this.seen.length;
  }

  /** Open connections. */
  get connections(): number {
    return this.sockets.size;
  }

  /** The next requests' behaviours, in order (not `then`: an upstream is no promise). */
  script(...behaviours: Behaviour[]): this {
    this.queue.push(...behaviours);
    return this;
  }

  /** Answers every request (after the script) this way. */
  always(behaviour: Behaviour): this {
    this.fallback = behaviour;
    return this;
  }

  /** Ends the requests left hanging with a 200 and `body`, so their callers see an answer. */
  release(body = 'late'): void {
    for (const res of this.hanging) res.end(body);
    this.hanging.clear();
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    this.seen.push(req.url ?? '');
    this.inFlight++;
    let done = false;
    const finished = (): void => {
      if (done) return;
      done = true;
      this.inFlight--;
    };
    res.on('close', finished);
    req.resume();
    const behaviour = this.queue.shift() ?? this.fallback;
    if (behaviour === 'reset') {
      req.socket.destroy();
      return;
    }
    if (behaviour === 'hang') {
      this.hanging.add(res);
      return;
    }
    res.writeHead(behaviour.status, behaviour.headers);
    res.end(behaviour.body ?? '');
  }
}
