import type { Clock } from '../kernel/clock';
import type { Entry } from '../kernel/entry';
import { TimeoutError } from '../kernel/errors';

/** What the HTTP layer needs of a connection (`net.Socket`). */
export interface HttpSocketLike {
  /** Whether the connection is closed (the client left, or the server closed it). */
  readonly destroyed: boolean;
  /** Told when the connection closes. */
  on(event: 'close', listener: () => void): unknown;
}

/** What the HTTP layer needs of Node's `http.ServerResponse` (Express `res`, Koa `ctx.res`, Fastify `reply.raw`). */
export interface HttpResponseLike {
  /** The status sent, or to be sent. */
  readonly statusCode: number;
  /**
   * Whether the response was ended (`end()` was called; Node's `writableEnded`). Read as this
   * field, not the getter: on Express's responses every read misses V8's caches (each has a
   * hidden class of its own), and a getter found four prototypes up costs several such reads.
   */
  readonly finished: boolean;
  /** Whether the status line and headers were sent. */
  readonly headersSent: boolean;
  /** The request it answers (Node sets it); its socket is the connection, also for a pipelined response not yet on it. */
  readonly req?: { readonly socket?: HttpSocketLike | null } | undefined;
  /** The connection, once the response is on it (`null` while a pipelined response waits behind another). */
  readonly socket?: unknown;
  /** Told when the response closes: after `finish`, or when the client leaves while it is on the socket. */
  on(event: 'close', listener: () => void): unknown;
  /** Sets a header before the response is sent (RateLimit headers on passing responses). */
  setHeader(name: string, value: string): unknown;
  /** Sends the status line and headers (a timeout's answer). */
  writeHead(status: number, headers: Readonly<Record<string, string>>): unknown;
  /** Sends the body and ends the response. */
  end(body: string): unknown;
}

/**
 * Where a response keeps its {@link GuardedRequest}; shared by every copy of the package. A
 * property, not a weak map: a weak map holding every response in flight makes each garbage
 * collection walk its entries, which cost more per request (measured: +10 µs on Koa) than
 * the property does. Not on a response whose prototype was swapped (Express gives each response
 * its app's prototype): such a response has a hidden class of its own, so every property read
 * on it misses V8's caches and adding one builds another hidden class (about 2 µs a request,
 * measured under load); its state is kept on its connection instead (see {@link OPEN}).
 */
const STATE = Symbol.for('floodgate.http.guardedRequest');
/**
 * Where a connection keeps the guarded requests still open on it: those whose response waits
 * behind another (pipelined), to end them when it closes, and those whose response's prototype
 * was swapped, to find them. Shared by every copy of the package.
 */
const OPEN = Symbol.for('floodgate.http.openRequests');

type Carrier = HttpResponseLike & { [STATE]?: GuardedRequest };
type TrackedSocket = HttpSocketLike & { [OPEN]?: GuardedRequest[] };

/**
 * The Floodgate state of one HTTP request: the entries it holds, the error its handler threw,
 * whether a block answered it, the signal that tells a queued admission the client left, and
 * its timeout. Once the request holds something it is kept (on the response, or on the
 * connection for an Express response: see STATE), so every Floodgate middleware on the request
 * shares it; a request refused before it held anything is never kept ({@link GuardedRequest.listen}).
 *
 * It ends exactly once, by whichever comes first: the response's `close` (after `finish`, or
 * when the client leaves while the response is on the socket), or the connection's `close`
 * (a pipelined request whose response waits behind another gets no event of its own when the
 * client leaves, whether its body was read or not: such a request listens to its connection).
 * Every entry then exits, failed or not, so no concurrency slot, hotspot counter or probe is
 * ever held by a client gone.
 */
export class GuardedRequest {
  /** The entries taken for the request, one per resource. */
  readonly entries: Entry[] = [];
  /** Whether a block (from a middleware or from deeper code) answered the request. */
  blocked = false;
  /** Whether the request has ended; nothing may be entered for it any more. */
  closed = false;
  /** Whether the request waits in a queue (not yet admitted to every resource: its handler has not run). */
  queued = false;
  private error: unknown = undefined;
  private errored = false;
  private controller: AbortController | undefined = undefined;
  private timer: AbortController | undefined = undefined;
  private deadline = Infinity;
  private listening = false;
  /** Whether the request is on its connection's list of open requests. */
  private tracked = false;

  private constructor(
    /** The response the request is answered with. */
    readonly res: HttpResponseLike,
    private readonly isFailure: (status: number, error: unknown) => boolean,
    /** The connection, if it can be listened to. */
    private readonly connection: TrackedSocket | undefined,
  ) {}

  /**
   * The state of `res`: the one a Floodgate middleware kept for it (see {@link GuardedRequest.listen}),
   * else a new one, closed if the client left or the response was sent before it was guarded
   * (behind an asynchronous middleware: nothing may be entered then).
   */
  static of(res: HttpResponseLike, isFailure: (status: number, error: unknown) => boolean): GuardedRequest {
    const socket = connectionOf(res);
    const found = GuardedRequest.find(res, socket);
    if (found !== undefined) return found;
    const state = new GuardedRequest(res, isFailure, socket);
    if (socket?.destroyed === true || res.finished) state.closed = true;
    return state;
  }

  /**
   * The state of `res`, if a Floodgate middleware guarded it (and, on a swapped response, it has
   * not ended). `socket` is its connection, when the caller has read it already.
   */
  static find(res: HttpResponseLike, socket = connectionOf(res)): GuardedRequest | undefined {
    return socket !== undefined && swapped(res) ? openOn(socket, res) : (res as Carrier)[STATE];
  }

  /**
   * Keeps the state for the request's other middlewares and ties it to the response's and the
   * connection's `close`, once, before the request holds anything (an entry, a place in a queue,
   * a timeout). A request refused before it held anything, as most are under attack, is never
   * kept or listened to: it has nothing to give back.
   */
  listen(): void {
    if (this.listening) return;
    this.listening = true;
    const res = this.res;
    const socket = this.connection;
    const onConnection = socket !== undefined && swapped(res);
    if (!onConnection) (res as Carrier)[STATE] = this;
    // A closure: finding the state from the response costs more on Express (see STATE).
    res.on('close', () => this.ended());
    // A response on its connection closes with it; one waiting behind another does not.
    if (socket !== undefined && (onConnection || res.socket == null)) this.track();
  }

  /** Whether the request already entered `resource` (through another middleware). */
  entered(resource: string): boolean {
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) if (entries[i]!.resource === resource) return true;
    return false;
  }

  /** A signal that aborts when the client leaves before the response is done. */
  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  /** Records the error the handler threw; it decides, with the status, whether the request failed. */
  traceError(error: unknown): void {
    this.error = error;
    this.errored = true;
  }

  /**
   * A guard refused the request: every entry it was admitted to on its way is given back
   * (`Entry.cancel()`: its pass in the window, concurrency, hotspot tokens, pacing slot), as if
   * the request had never come, so a refused flood spends no budget of the resources it passed.
   */
  refuse(): void {
    const entries = this.entries;
    for (let i = entries.length - 1; i >= 0; i--) entries[i]!.cancel();
    entries.length = 0;
    this.blocked = true;
    this.stopTimer();
  }

  /**
   * Answers the request with a {@link TimeoutError} after `timeoutMs` (from now, on `clock`)
   * unless it ends first: every entry exits then with the error traced (a failure, and a slow
   * call, for circuit breakers) and `answer` sends the response. The shortest timeout of the
   * request's routes wins.
   */
  arm(resource: string, timeoutMs: number, clock: Clock, answer: (error: TimeoutError) => void): void {
    if (this.closed) return;
    const deadline = clock.now() + timeoutMs;
    if (deadline >= this.deadline) return;
    this.stopTimer();
    this.deadline = deadline;
    const timer = (this.timer = new AbortController());
    clock.sleep(timeoutMs, timer.signal).then(
      () => this.timeOut(new TimeoutError(resource, timeoutMs), answer),
      () => {
        // The request ended first, or a shorter timeout replaced this one.
      },
    );
  }

  /**
   * Ends the request, once: aborts a queued admission, stops the timeout, and exits every
   * entry, tracing a failure on each when the response was ended (its handler answered: a
   * client that left before the answer is no failure), was not a block, and
   * `isFailure(status, error)` says so. A request that ends while it waits in a queue never
   * ran: what it was admitted to is given back instead.
   */
  close(status: number, finished: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.controller?.abort();
    this.stopTimer();
    this.untrack();
    const entries = this.entries;
    if (entries.length === 0) return;
    if (this.queued) {
      this.refuse();
      return;
    }
    let failed = false;
    if (finished && !this.blocked) {
      try {
        failed = this.isFailure(status, this.errored ? this.error : undefined);
      } catch (error) {
        process.emitWarning(`Floodgate's isFailure option threw: ${String(error)}`, {
          code: 'FLOODGATE_IS_FAILURE_ERROR',
        });
      }
    }
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (failed) entry.traceError(this.errored ? this.error : status);
      entry.exit();
    }
    entries.length = 0;
  }

  private timeOut(error: TimeoutError, answer: (error: TimeoutError) => void): void {
    this.timer = undefined;
    if (this.closed) return;
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) {
      entries[i]!.traceError(error);
      entries[i]!.exit();
    }
    entries.length = 0;
    // Answered by a timeout: not a failure again when the response closes.
    this.blocked = true;
    if (!this.res.headersSent) answer(error);
  }

  private stopTimer(): void {
    this.timer?.abort();
    this.timer = undefined;
  }

  /** Puts the request on its connection's list of open requests (see OPEN). */
  private track(): void {
    const socket = this.connection!;
    let open = socket[OPEN];
    if (open === undefined) {
      open = socket[OPEN] = [];
      socket.on('close', onSocketClose);
    }
    open.push(this);
    this.tracked = true;
  }

  private untrack(): void {
    if (!this.tracked) return;
    this.tracked = false;
    const open = this.connection![OPEN];
    if (open === undefined) return;
    // A connection's responses end in order: the request ending is almost always its oldest open one.
    const at = open.indexOf(this);
    if (at === 0) open.shift();
    else if (at > 0) open.splice(at, 1);
  }

  /** The response or its connection closed: ends the request, finished or not. */
  ended(): void {
    this.close(this.res.statusCode, this.res.finished);
  }
}

/** The connection of `res` (its request's socket, also while the response waits behind another), if it can be listened to. */
function connectionOf(res: HttpResponseLike): TrackedSocket | undefined {
  const socket: TrackedSocket | null | undefined = res.req?.socket;
  return socket != null && typeof socket.on === 'function' ? socket : undefined;
}

/** The last prototype {@link swapped} was asked about, and its answer: an app's responses all share one. */
let lastPrototype: object | undefined;
let lastSwapped = false;

/**
 * Whether the prototype of `res` was swapped (see {@link STATE}) for an object that is no
 * class's prototype (Express's `app.response`, made by `Object.create`), where Node's, Koa's and
 * Fastify's responses have their class's: its state is then kept on its connection.
 */
function swapped(res: HttpResponseLike): boolean {
  const prototype = Object.getPrototypeOf(res) as object;
  if (prototype !== lastPrototype) {
    lastPrototype = prototype;
    lastSwapped = !Object.hasOwn(prototype, 'constructor');
  }
  return lastSwapped;
}

/** The state of `res` among those open on `socket` (the last ones are the likeliest). */
function openOn(socket: TrackedSocket, res: HttpResponseLike): GuardedRequest | undefined {
  const open = socket[OPEN];
  if (open !== undefined) for (let i = open.length - 1; i >= 0; i--) if (open[i]!.res === res) return open[i];
  return undefined;
}

function onSocketClose(this: TrackedSocket): void {
  const open = this[OPEN];
  if (open === undefined) return;
  this[OPEN] = [];
  for (let i = 0; i < open.length; i++) open[i]!.ended();
}
