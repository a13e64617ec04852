import type { Entry } from '../kernel/entry';

/** What the HTTP layer needs of Node's `http.ServerResponse` (Express `res`, Koa `ctx.res`, Fastify `reply.raw`). */
export interface HttpResponseLike {
  readonly statusCode: number;
  /** Whether the whole response was handed to the OS (false when the client left first). */
  readonly writableFinished: boolean;
  on(event: 'close', listener: () => void): unknown;
}

/** Where a response keeps its {@link GuardedRequest}; shared by every copy of the package. */
const STATE = Symbol.for('floodgate.http.guardedRequest');

type Carrier = HttpResponseLike & { [STATE]?: GuardedRequest };

/**
 * The Floodgate state of one HTTP request: the entries it holds, the error its handler threw,
 * whether a block answered it, and the signal that tells a queued admission the client left.
 * It lives on the response object, so every Floodgate middleware on the request shares it,
 * and ends on the response's `close` event (after `finish`, or when the client aborts): every
 * entry then exits, failed or not, so concurrency never leaks.
 */
export class GuardedRequest {
  /** The entries taken for the request, one per resource. */
  readonly entries: Entry[] = [];
  /** Whether a block (from a middleware or from deeper code) answered the request. */
  blocked = false;
  /** Whether the response has closed; entries taken after that exit at once. */
  closed = false;
  private error: unknown = undefined;
  private errored = false;
  private controller: AbortController | undefined = undefined;

  private constructor(private readonly isFailure: (status: number, error: unknown) => boolean) {}

  /** The state of `res`, made (and tied to the response's `close`) on first use. */
  static of(res: HttpResponseLike, isFailure: (status: number, error: unknown) => boolean): GuardedRequest {
    const carrier = res as Carrier;
    let state = carrier[STATE];
    if (state === undefined) {
      state = new GuardedRequest(isFailure);
      carrier[STATE] = state;
      res.on('close', onClose);
    }
    return state;
  }

  /** The state of `res`, if a Floodgate middleware guarded it. */
  static find(res: HttpResponseLike): GuardedRequest | undefined {
    return (res as Carrier)[STATE];
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
   * Ends the request: aborts a queued admission, and exits every entry, tracing a failure on
   * each when the response finished, was not a block, and `isFailure(status, error)` says so.
   */
  close(status: number, finished: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.controller?.abort();
    let failed = false;
    if (finished && !this.blocked && this.entries.length > 0) {
      try {
        failed = this.isFailure(status, this.errored ? this.error : undefined);
      } catch (error) {
        process.emitWarning(`Floodgate's isFailure option threw: ${String(error)}`, { code: 'FLOODGATE_IS_FAILURE_ERROR' });
      }
    }
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (failed) entry.traceError(this.errored ? this.error : status);
      entry.exit();
    }
  }
}

function onClose(this: HttpResponseLike): void {
  (this as Carrier)[STATE]!.close(this.statusCode, this.writableFinished);
}
