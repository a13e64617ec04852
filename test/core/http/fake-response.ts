import { EventEmitter } from 'node:events';

/** A stand-in for `http.ServerResponse`: what the HTTP guard reads of it. */
export class FakeResponse extends EventEmitter {
  statusCode = 200;
  writableFinished = false;

  /** The response was sent with `status`. */
  finish(status: number): void {
    this.statusCode = status;
    this.writableFinished = true;
    this.emit('close');
  }

  /** The client left before the response was sent. */
  abort(): void {
    this.emit('close');
  }
}
