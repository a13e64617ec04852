import { EventEmitter } from 'node:events';

/** A stand-in for a connection (`net.Socket`): what the HTTP guard reads of it. */
export class FakeSocket extends EventEmitter {
  destroyed = false;

  /** The connection closes (the client left, or the server closed it). */
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A stand-in for `http.ServerResponse`: what the HTTP guard reads of it. */
export class FakeResponse extends EventEmitter {
  statusCode = 200;
  finished = false;
  headersSent = false;
  readonly headers: Record<string, string> = {};
  body: string | undefined = undefined;
  readonly req: { readonly socket: FakeSocket };
  /** The connection once the response is on it; `null` for a pipelined response waiting behind another. */
  socket: FakeSocket | null;

  constructor(socket = new FakeSocket(), options: { readonly waiting?: boolean } = {}) {
    super();
    this.req = { socket };
    this.socket = options.waiting === true ? null : socket;
  }

  /** The response was sent with `status`: ended, then closed once the bytes are out. */
  finish(status: number): void {
    this.writeHead(status, {});
    this.end('');
    this.emit('close');
  }

  /** The client left before the response was sent. */
  abort(): void {
    this.req.socket.destroyed = true;
    this.emit('close');
  }

  setHeader(name: string, value: string): void {
    this.headers[name.toLowerCase()] = value;
  }

  writeHead(status: number, headers: Readonly<Record<string, string>>): void {
    this.statusCode = status;
    this.headersSent = true;
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
  }

  /**
   * Ends the response: Node sets `finished` at once and emits `prefinish` for a response on its
   * connection (a pipelined one waiting behind another, once it is on it); its `close` comes
   * when the bytes are out.
   */
  end(body: string): void {
    this.body = body;
    this.headersSent = true;
    this.finished = true;
    if (this.socket !== null) this.emit('prefinish');
  }
}
