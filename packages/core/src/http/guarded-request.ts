import { scheduleOn, type Clock } from '../kernel/clock';
import type { Entry } from '../kernel/entry';
import { TimeoutError } from '../kernel/errors';
import type { NodeRequestLike } from './request-keys';

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
  /**
   * The request it answers (Node sets it): its socket is the connection, also for a pipelined
   * response not yet on it; `complete` is whether its body has been received whole; its
   * headers are what key sources and priorities read.
   */
  readonly req?:
    | (NodeRequestLike & {
        readonly socket?: HttpSocketLike | null;
        readonly complete?: boolean;
        /** Aborts what is left of the request (its unread body), once the answer is out. */
        destroy?(): unknown;
      })
    | undefined;
  /** The connection, once the response is on it (`null` while a pipelined response waits behind another). */
  readonly socket?: unknown;
  /**
   * Told when the response closes (after `finish`, or when the client leaves while it is on the
   * socket), and when `end()` was called on a response on its socket (`prefinish`: at once,
   * however slowly the client reads).
   */
  on(event: 'close' | 'prefinish', listener: () => void): unknown;
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
 * Its entries end in two steps, once each:
 *
 * - **its outcome** is recorded when the handler answered: `end()` called on the response (its
 *   `prefinish`, or the call itself for a pipelined response still waiting behind another),
 *   however long the client then takes to read the answer; or when the route's timeout answers
 *   it (a failure and a slow call, or not counted at all when the client was still sending the
 *   request: 408); or when the request closes unanswered (the client left: no failure).
 * - **its slot** (concurrency, hotspot counters) is given back when the request closes: the
 *   response's `close` (after `finish`, so a client slow to read holds it until it has read,
 *   or when the client leaves while the response is on the socket), or the connection's
 *   `close` (a pipelined request whose response waits behind another gets no event of its own
 *   when the client leaves, whether its body was read or not: such a request listens to its
 *   connection). A request its timeout answered keeps its slot, past that close, until its
 *   handler has settled (see {@link GuardedRequest.handlerStarts}): a concurrency limit bounds
 *   the handlers running, not only the requests waiting for an answer.
 *
 * So no client can hold a slot, hotspot counter or probe once it has gone, and no outcome is
 * the client's doing: a slow reader or a slow uploader is neither an error nor a slow call.
 */
export class GuardedRequest {
  /** The entries taken for the request ({@link GuardedRequest.hold} adds one). */
  private held: Entry[] = [];
  /** Whether a block (from a middleware or from deeper code) answered the request. */
  blocked = false;
  /** Whether the request has ended; nothing may be entered for it any more. */
  closed = false;
  /** Whether the request waits in a queue (not yet admitted to every resource: its handler has not run). */
  queued = false;
  private error: unknown = undefined;
  private errored = false;
  private controller: AbortController | undefined = undefined;
  /** Cancels the route's timeout, while one is armed. */
  private cancelTimeout: (() => void) | undefined = undefined;
  private deadline = Infinity;
  private listening = false;
  /** Whether the request is on its connection's list of open requests. */
  private tracked = false;
  /** Whether the entries' outcome is recorded (the handler answered, the timeout did, or the request closed). */
  private concluded = false;
  /** Whether the route's timeout answered the request: its slot then waits for its handler to settle. */
  private timedOut = false;
  /** Whether the timeout answered 408: the client was still sending the request. */
  private cutOff = false;
  /** Adapters waiting for the handler to settle ({@link GuardedRequest.handlerStarts}). */
  private running = 0;
  /** Whether the handler's `end()` is watched through the response's prototype (see {@link watchEndOn}). */
  private watchingEnd = false;

  private constructor(
    /** The response the request is answered with. */
    readonly res: HttpResponseLike,
    private readonly isFailure: (status: number, error: unknown) => boolean,
    /** The connection, if it can be listened to. */
    private readonly connection: TrackedSocket | undefined,
    /** Node's request the response answers (`res.req`), read once: key sources and priority headers read it. */
    readonly request: HttpResponseLike['req'],
    /** Whether the state is kept on the connection, the response's prototype being swapped (see STATE). */
    private readonly onConnection: boolean,
  ) {}

  /**
   * The state of `res`: the one a Floodgate middleware kept for it (see {@link GuardedRequest.listen}),
   * else a new one, closed if the client left or the response was sent before it was guarded
   * (behind an asynchronous middleware: nothing may be entered then).
   */
  static of(res: HttpResponseLike, isFailure: (status: number, error: unknown) => boolean): GuardedRequest {
    const req = res.req;
    const socket = connectionOf(req);
    const onConnection = socket !== undefined && swapped(res);
    const found = GuardedRequest.find(res, socket, onConnection);
    if (found !== undefined) return found;
    const state = new GuardedRequest(res, isFailure, socket, req, onConnection);
    if (socket?.destroyed === true || res.finished) state.closed = true;
    return state;
  }

  /**
   * The state of `res`, if a Floodgate middleware guarded it (and, on a swapped response, it has
   * not ended). `socket` is its connection and `onConnection` whether the state is kept there,
   * when the caller has read them already.
   */
  static find(
    res: HttpResponseLike,
    socket = connectionOf(res.req),
    onConnection = socket !== undefined && swapped(res),
  ): GuardedRequest | undefined {
    return onConnection ? openOn(socket!, res) : (res as Carrier)[STATE];
  }

  /**
   * As {@link GuardedRequest.find}, and also a request that has closed but keeps its slots
   * while its handler runs on after its timeout (no longer on its connection: see `timeOut`).
   */
  static findHolding(res: HttpResponseLike): GuardedRequest | undefined {
    return GuardedRequest.find(res) ?? (res as Carrier)[STATE];
  }

  /**
   * Whether any request has had a timeout armed, in this copy of the package: until one has,
   * no request's handler needs watching ({@link GuardedRequest.handlerStarts} would say `false`),
   * and adapters need not look the request up to be told so.
   */
  static get anyArmed(): boolean {
    return timeoutsArmed;
  }

  /**
   * Keeps the state for the request's other middlewares and ties it to the response's `close`
   * and `prefinish` and to the connection's `close`, once, before the request holds anything
   * (an entry, a place in a queue, a timeout). A request refused before it held anything, as
   * most are under attack, is never kept or listened to: it has nothing to give back.
   */
  listen(): void {
    if (this.listening) return;
    this.listening = true;
    const res = this.res;
    const socket = this.connection;
    const onConnection = this.onConnection;
    if (!onConnection) (res as Carrier)[STATE] = this;
    // On a swapped prototype, its `emit` tells the request of both (see watchEventsOn), unless
    // the response has an `emit` of its own, which may call the one it found before the wrap.
    if (!onConnection || Object.hasOwn(res, 'emit')) {
      // Closures: finding the state from the response costs more on Express (see STATE).
      res.on('close', () => this.ended());
      res.on('prefinish', () => this.answered());
    }
    // A response on its connection closes with it; one waiting behind another does not, and
    // tells of its end only once it is on the connection: its handler's `end()` is watched.
    const waiting = res.socket == null;
    if (socket !== undefined && (onConnection || waiting)) this.track();
    if (waiting) this.watchEnd(onConnection);
  }

  /** The entries taken for the request, one per resource. */
  get entries(): readonly Entry[] {
    return this.held;
  }

  /**
   * Holds an entry the request was admitted to. The first is held in an array of its own, made
   * for it: pushing it onto the empty array would grow a backing store for 16 entries on every
   * request (about 360 instructions), where nearly every request holds one or two.
   */
  hold(entry: Entry): void {
    if (this.held.length === 0) this.held = [entry];
    else this.held.push(entry);
  }

  /** Whether the request already entered `resource` (through another middleware). */
  entered(resource: string): boolean {
    const entries = this.held;
    for (let i = 0; i < entries.length; i++) if (entries[i]!.resource === resource) return true;
    return false;
  }

  /** The signal of the request's queued admissions: aborted if the request ends while queued. */
  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  /**
   * Records the error the handler threw; it decides, with the status, whether the request failed.
   * An error reaching Floodgate's error handling also means the handler has settled.
   */
  traceError(error: unknown): void {
    this.error = error;
    this.errored = true;
    this.handlerEnded();
  }

  /**
   * A guard refused the request: every entry it was admitted to on its way is given back
   * (`Entry.cancel()`: its pass in the window, concurrency, hotspot tokens, pacing slot), as if
   * the request had never come, so a refused flood spends no budget of the resources it passed.
   */
  refuse(): void {
    const entries = this.held;
    for (let i = entries.length - 1; i >= 0; i--) entries[i]!.cancel();
    this.held = [];
    this.blocked = true;
    this.stopTimer();
  }

  /**
   * Answers the request after `timeoutMs` (from now, on `clock`) unless its handler answers
   * first: `answer` sends 503 with the {@link TimeoutError}, every entry's outcome recorded then
   * as a failure (and a slow call, for circuit breakers); or, when the request's body has not
   * been received whole (the client is still sending it), `answer` sends 408, and the outcome
   * is not recorded at all. The shortest timeout of the request's routes wins.
   */
  arm(
    resource: string,
    timeoutMs: number,
    clock: Clock,
    answer: (error: TimeoutError, clientSending: boolean) => void,
  ): void {
    if (this.closed || this.concluded) return;
    const deadline = clock.now() + timeoutMs;
    if (deadline >= this.deadline) return;
    timeoutsArmed = true;
    this.stopTimer();
    this.deadline = deadline;
    this.cancelTimeout = scheduleOn(clock, timeoutMs, () =>
      this.timeOut(new TimeoutError(resource, timeoutMs), answer),
    );
  }

  /**
   * The adapter hands the request to its handler (or to the rest of its middleware chain): when
   * the request has a timeout, returns `true`, and the adapter calls
   * {@link GuardedRequest.handlerSettled} once the handler has settled, so a request its timeout
   * answered keeps its slot until then. Besides, the handler's own (late, discarded) `end()` and
   * an error reaching Floodgate's error handling (`traceError`) count as settling.
   */
  handlerStarts(): boolean {
    if (this.deadline === Infinity || (this.closed && !this.holding)) return false;
    this.running++;
    return true;
  }

  /** The handler an adapter watched ({@link GuardedRequest.handlerStarts}) has settled. */
  handlerSettled(): void {
    if (this.running > 0) this.running--;
    if (this.running === 0 && this.closed) this.release();
  }

  /**
   * The response or its connection closed: ends the request, once, finished or not. Aborts a
   * queued admission, stops the timeout, records the entries' outcome unless it is recorded
   * already (a failure when the response was ended: its handler answered, a client that left
   * before the answer is no failure; it was not a block; and `isFailure(status, error)` says
   * so), and gives back their slots, unless the timeout answered the request and its handler
   * has not settled yet. A request that ends while it waits in a queue never ran: what it was
   * admitted to is given back instead.
   */
  ended(): void {
    if (this.closed) return;
    this.closed = true;
    // Only a queued admission listens (aborting a signal costs microseconds in Node).
    if (this.queued) this.controller?.abort();
    this.stopTimer();
    this.untrack();
    this.unwatchEnd();
    if (this.held.length === 0) return;
    if (this.queued) {
      this.refuse();
      return;
    }
    // The response is read only when the outcome is still to be recorded (on Express every read
    // misses V8's caches: see STATE); an answered request recorded it when it was answered.
    if (!this.concluded) this.conclude(this.res.finished && this.failed(this.res.statusCode));
    // The rest of a request cut off by a 408 never comes (Node stops reading it once the answer is
    // out): aborting it ends a handler still reading its body, which then settles.
    if (this.cutOff) this.res.req?.destroy?.();
    if (!this.holding) this.release();
  }

  /** Whether the slots wait for the handler: the timeout answered the request and its handler runs on. */
  private get holding(): boolean {
    return this.timedOut && this.running > 0;
  }

  /**
   * The handler ended the response (`prefinish`, or its `end()`): the outcome is recorded now,
   * once. Called by the response's events and by the wrapped `end()` that watches it.
   */
  answered(): void {
    this.unwatchEnd();
    if (this.concluded || this.closed || this.held.length === 0 || this.queued) return;
    this.stopTimer();
    this.conclude(this.failed(this.res.statusCode));
  }

  /** Whether the handler's answer is a failure for circuit breakers. */
  private failed(status: number): boolean {
    if (this.blocked) return false;
    try {
      return this.isFailure(status, this.errored ? this.error : undefined);
    } catch (error) {
      process.emitWarning(`Floodgate's isFailure option threw: ${String(error)}`, {
        code: 'FLOODGATE_IS_FAILURE_ERROR',
      });
      return false;
    }
  }

  /** Records every entry's outcome, a failure or not; their slots stay held until {@link GuardedRequest.release}. */
  private conclude(failed: boolean): void {
    this.concluded = true;
    const entries = this.held;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (failed) entry.traceError(this.errored ? this.error : this.res.statusCode);
      entry.conclude();
    }
  }

  /** Gives back every entry's slot, once. */
  private release(): void {
    const entries = this.held;
    for (let i = 0; i < entries.length; i++) entries[i]!.exit();
    // A new array, not `length = 0`: V8 does not inline that store (a call of about 450 instructions).
    this.held = [];
  }

  /**
   * The route's timeout passed before the handler answered. Headers already sent (a streamed
   * answer): the timeout is recorded, the answer left to the handler. Otherwise the request is
   * answered, and what its handler sends later is discarded (see {@link discardLateAnswer}).
   */
  private timeOut(error: TimeoutError, answer: (error: TimeoutError, clientSending: boolean) => void): void {
    this.cancelTimeout = undefined;
    if (this.closed || this.concluded) return;
    const res = this.res;
    const clientSending = res.req?.complete === false;
    this.concluded = true;
    const entries = this.held;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (clientSending) entry.discard();
      else {
        entry.traceError(error);
        entry.conclude();
      }
    }
    if (res.headersSent) return;
    this.timedOut = true;
    this.cutOff = clientSending;
    // Found by the handler's late reports after the connection has forgotten it (see findHolding).
    (res as Carrier)[STATE] = this;
    answer(error, clientSending);
    discardLateAnswer(res, () => this.handlerEnded());
  }

  /** The handler has settled (its late `end()`, or an error reached Floodgate): every watcher is done. */
  private handlerEnded(): void {
    if (this.running === 0) return;
    this.running = 0;
    if (this.closed) this.release();
  }

  /**
   * A pipelined response waiting behind another tells of its `end()` only once it is on its
   * connection, which a client that does not read the response before it delays at will: its
   * own `end()` is watched instead. On a response whose prototype was swapped (Express), through
   * that prototype, once (see {@link watchEndOn}): an own property added to such a response,
   * which has a hidden class of its own, costs V8 a copy of its class (about 2 µs a request
   * under pipelining, measured). Elsewhere as an own property of the response, whose class
   * V8 shares (the transition is cached): cheap.
   */
  private watchEnd(onConnection: boolean): void {
    if (onConnection) {
      watchEndOn(Object.getPrototypeOf(this.res) as object);
      this.watchingEnd = true;
      waitingEnds++;
      return;
    }
    const res = this.res as unknown as Record<'end', (this: unknown, ...args: unknown[]) => unknown>;
    const end = res.end;
    const answered = (): void => this.answered();
    res.end = function (this: unknown, ...args: unknown[]): unknown {
      const result = end.apply(this, args);
      answered();
      return result;
    };
  }

  /** The end is no longer watched through the prototype (it came, or the request closed). */
  private unwatchEnd(): void {
    if (!this.watchingEnd) return;
    this.watchingEnd = false;
    waitingEnds--;
  }

  private stopTimer(): void {
    this.cancelTimeout?.();
    this.cancelTimeout = undefined;
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
    openRequests++;
  }

  private untrack(): void {
    if (!this.tracked) return;
    this.tracked = false;
    openRequests--;
    const open = this.connection![OPEN];
    if (open === undefined) return;
    // A connection's responses end in order: the request ending is almost always its oldest open one.
    const at = open.indexOf(this);
    if (at === 0) open.shift();
    else if (at > 0) open.splice(at, 1);
  }
}

/** The methods a late answer would call on a response already answered: each does nothing and returns the response. */
const ANSWER_METHODS = [
  'setHeader',
  'setHeaders',
  'appendHeader',
  'removeHeader',
  'writeHead',
  'flushHeaders',
  'addTrailers',
  'writeContinue',
  'writeProcessing',
  'writeEarlyHints',
] as const;

/**
 * Makes what the handler of a request its timeout answered sends later a quiet no-op, and
 * tells `ended` when it ends its answer: the response says its headers are not sent (so a
 * handler, a framework's error handler or `res.json()` answers as usual instead of throwing
 * "headers already sent"), writes are dropped, and `end()` calls `ended`. Express gives no other
 * sign that its handler is done. Own properties of this one response, set on the timeout's rare path.
 */
function discardLateAnswer(res: HttpResponseLike, ended: () => void): void {
  const target = res as unknown as Record<string, unknown>;
  const self = function (this: unknown): unknown {
    return this;
  };
  for (const name of ANSWER_METHODS) target[name] = self;
  Object.defineProperty(res, 'headersSent', { configurable: true, enumerable: false, value: false });
  target.write = (...args: unknown[]): boolean => {
    callBack(args);
    return true;
  };
  target.end = function (this: unknown, ...args: unknown[]): unknown {
    callBack(args);
    ended();
    return this;
  };
}

/** Calls a write's or an end's callback (its last function argument), as Node would once written. */
function callBack(args: readonly unknown[]): void {
  const last = args[args.length - 1];
  if (typeof last === 'function') process.nextTick(last);
}

/** The connection of a response's request `req` (its socket, also while the response waits behind another), if it can be listened to. */
function connectionOf(req: HttpResponseLike['req']): TrackedSocket | undefined {
  const socket: TrackedSocket | null | undefined = req?.socket;
  return socket != null && typeof socket.on === 'function' ? socket : undefined;
}

/** The last prototype {@link swapped} was asked about, and its answer: an app's responses all share one. */
let lastPrototype: object | undefined;
let lastSwapped = false;

/**
 * Whether the prototype of `res` was swapped (see {@link STATE}) for an object that is no
 * class's prototype (Express's `app.response`, made by `Object.create`), where Node's, Koa's and
 * Fastify's responses have their class's: its state is then kept on its connection, and the
 * prototype's `emit` tells it of the response's events (see {@link watchEventsOn}).
 */
function swapped(res: HttpResponseLike): boolean {
  const prototype = Object.getPrototypeOf(res) as object;
  if (prototype !== lastPrototype) {
    lastPrototype = prototype;
    lastSwapped = !Object.hasOwn(prototype, 'constructor');
    if (lastSwapped) watchEventsOn(prototype);
  }
  return lastSwapped;
}

/** The state of `res` among those open on `socket` (the last ones are the likeliest). */
function openOn(socket: TrackedSocket, res: HttpResponseLike): GuardedRequest | undefined {
  const open = socket[OPEN];
  if (open !== undefined) for (let i = open.length - 1; i >= 0; i--) if (open[i]!.res === res) return open[i];
  return undefined;
}

/** Whether a request has had a timeout armed (see {@link GuardedRequest.anyArmed}). */
let timeoutsArmed = false;
/** How many requests watch their handler's `end()` through their response's prototype. */
let waitingEnds = 0;
/** How many requests are on their connection's list of open ones (see OPEN). */
let openRequests = 0;

/** A response method {@link wrapSwapped} wraps. */
type Method = (this: HttpResponseLike, ...args: unknown[]) => unknown;

/**
 * Wraps the method `name` that the responses of a swapped prototype (Express's `app.response`)
 * inherit, once per prototype and name in this copy of the package (`watched` holds the
 * prototypes done): `wrap` is given the method it replaces, which it calls. The wrap goes on the
 * topmost swapped prototype (Express's own `response`), which every app's `app.response`
 * inherits, a mounted app's too: Express gives a request leaving a mounted app its parent's
 * prototype, which a wrap on the mounted app's would miss. A response's own method (another
 * middleware's wrapper) still reaches the wrap, as it calls whatever method it found.
 */
function wrapSwapped(
  swappedPrototype: object,
  name: 'end' | 'emit',
  watched: WeakSet<object>,
  wrap: (inherited: Method) => Method,
): void {
  let prototype = swappedPrototype;
  for (let up = Object.getPrototypeOf(prototype) as object | null; up !== null && !Object.hasOwn(up, 'constructor');)
    [prototype, up] = [up, Object.getPrototypeOf(up) as object | null];
  if (watched.has(prototype)) return;
  watched.add(prototype);
  const inherited = (prototype as Record<typeof name, Method>)[name];
  Object.defineProperty(prototype, name, {
    configurable: true,
    enumerable: false,
    writable: true,
    value: wrap(inherited),
  });
}

/** The swapped prototypes whose `end` this copy of the package watches (see {@link watchEndOn}). */
const endWatched = new WeakSet<object>();

/**
 * Watches `end()` on the responses of a swapped prototype (Express's `app.response`), once (see
 * {@link wrapSwapped}): the `end` they inherit, wrapped, tells the request whose waiting response
 * it ended (looked up on its connection only while some request waits for its end).
 */
function watchEndOn(prototype: object): void {
  wrapSwapped(
    prototype,
    'end',
    endWatched,
    (inherited) =>
      function end(this: HttpResponseLike, ...args: unknown[]): unknown {
        const result = inherited.apply(this, args);
        if (waitingEnds > 0) openStateOf(this)?.answered();
        return result;
      },
  );
}

/** The swapped prototypes whose `emit` this copy of the package watches (see {@link watchEventsOn}). */
const emitWatched = new WeakSet<object>();

/**
 * Tells the requests of a swapped prototype's responses (Express's `app.response`) of their
 * `prefinish` and `close` through the `emit` they inherit, wrapped once (see {@link wrapSwapped}),
 * before the listeners hear them, where other responses are listened to. On a response with a
 * hidden class of its own, `on()` misses V8's caches on every field it reads and writes: a
 * listener costs about 9,000 instructions a request on Express, against 900 on Fastify (measured
 * with the instruction suite). The request is looked up on its connection, only while some
 * request is open on one.
 */
function watchEventsOn(prototype: object): void {
  wrapSwapped(
    prototype,
    'emit',
    emitWatched,
    (inherited) =>
      function emit(this: HttpResponseLike, event: unknown, ...args: unknown[]): unknown {
        if ((event === 'close' || event === 'prefinish') && openRequests > 0) {
          const state = openStateOf(this);
          if (event === 'close') state?.ended();
          else state?.answered();
        }
        return inherited.call(this, event, ...args);
      },
  );
}

/** The request of `res` open on its connection (see OPEN), if this copy of the package guards it. */
function openStateOf(res: HttpResponseLike): GuardedRequest | undefined {
  const socket = connectionOf(res.req);
  const state = socket === undefined ? undefined : openOn(socket, res);
  // Another copy of the package keeps its own requests on the connection too.
  return state instanceof GuardedRequest ? state : undefined;
}

function onSocketClose(this: TrackedSocket): void {
  const open = this[OPEN];
  if (open === undefined) return;
  this[OPEN] = [];
  for (let i = 0; i < open.length; i++) open[i]!.ended();
}
