import type { Server } from 'node:http';
import request from 'supertest';
import type { Floodgate } from '@floodgate/core';
import type { AppSpec, Harness } from './app-spec';
import { RawSession } from './raw-session';
import {
  BIG_ANSWER as BIG,
  openRaw,
  rawRequest,
  watchResponses,
  type RawConnection,
  type ResponseEvents,
} from './raw-client';
import { EventCount } from '../support/event-count';
import { settled } from '../support/settled';

/**
 * Time a client controls is not the service's failure (#24): run against each framework by its
 * harness. A client that reads its answer slowly, or sends its request slowly, is neither an
 * error nor a slow call, so no number of them opens a breaker for everyone; and the limits still
 * hold: a concurrency slot is held until the client has read its answer (or left).
 */

const SLOW_CLIENTS = 6;

/** An errorRatio breaker that six failures in its window open. */
const ERROR_RATIO = {
  strategy: 'errorRatio',
  threshold: 0.5,
  minRequestAmount: 5,
  statIntervalMs: 60_000,
  retryTimeoutMs: 5000,
} as const;

/** A slowRequestRatio breaker that calls slower than 200 ms open. */
export const SLOW_RATIO = {
  strategy: 'slowRequestRatio',
  maxAllowedRtMs: 200,
  threshold: 0.5,
  minRequestAmount: 3,
  statIntervalMs: 60_000,
  retryTimeoutMs: 5000,
} as const;

/** A POST of `length` bytes of which only the first `sent` are written: a client still sending its body. */
function partialUpload(length: number, sent: number): string {
  const whole = rawRequest('POST', '/upload', { 'Content-Type': 'text/plain' }, 'u'.repeat(length));
  return whole.slice(0, whole.length - (length - sent));
}

/** Counts the calls `fg` admits to `resource` (its `pass` events), so a test waits for them. */
function passes(fg: Floodgate, resource: string): EventCount {
  const count = new EventCount();
  fg.on('pass', (event) => {
    if (event.resource === resource) count.add();
  });
  return count;
}

/** Runs the slow-client tests against one framework. */
export function runSlowClients(harness: Harness): void {
  const session = new RawSession(harness);
  /** The events of the app's responses, counted by the test's own listeners (a new app each test). */
  let responses: ResponseEvents;
  const start = (spec: Omit<AppSpec, 'floodgate'>): Promise<Server> =>
    session.start(spec, (server) => (responses = watchResponses(server)));

  /** Opens `count` connections that send `payload` and read nothing. */
  function slowReaders(server: Server, count: number, payload = rawRequest('GET', '/big')): RawConnection[] {
    const opened = Array.from({ length: count }, () => openRaw(server, payload, { paused: true }));
    session.clients.push(...opened);
    return opened;
  }

  const concurrency = (resource: string): number => session.concurrency(resource);
  const big = { method: 'GET', path: '/big', handler: () => ({ body: { big: BIG } }) } as const;

  describe(`${harness.name}: clients that read slowly`, () => {
    it('are not timed out once the handler has answered, so they open no errorRatio breaker (#24)', async () => {
      const server = await start({
        routes: [{ ...big, guard: { circuitBreaker: ERROR_RATIO, timeoutMs: 500 } }],
      });
      slowReaders(server, SLOW_CLIENTS);
      await responses.ended.reached(SLOW_CLIENTS);
      await session.clock.advance(1000);
      expect(session.fg.totals('GET /big')).toMatchObject({ error: 0, timeout: 0 });
      expect(session.fg.circuitState('GET /big')[0]!.state).toBe('closed');
      expect(concurrency('GET /big')).toBe(SLOW_CLIENTS);
      await request(server).get('/big').expect(200);
    });

    it('are not slow calls: their response time ends when the handler answered (#24)', async () => {
      const server = await start({
        options: { routes: { 'GET /big': { circuitBreaker: SLOW_RATIO } } },
        routes: [big],
      });
      const readers = slowReaders(server, SLOW_CLIENTS);
      await responses.ended.reached(SLOW_CLIENTS);
      await session.clock.advance(1000);
      for (const reader of readers) reader.destroy();
      await responses.closed.reached(SLOW_CLIENTS);
      expect(concurrency('GET /big')).toBe(0);
      expect(session.fg.totals('GET /big')).toMatchObject({ success: SLOW_CLIENTS, error: 0, rtSumMs: 0 });
      expect(session.fg.circuitState('GET /big')[0]!.state).toBe('closed');
      await request(server).get('/big').expect(200);
    });

    it('are not slow calls either when they pipeline requests and read none of the answers (#24)', async () => {
      const server = await start({
        options: { routes: { 'GET /big': { circuitBreaker: SLOW_RATIO } } },
        routes: [big],
      });
      const admitted = passes(session.fg, 'GET /big');
      const [pipelining] = slowReaders(server, 1, rawRequest('GET', '/big').repeat(3));
      await admitted.reached(3);
      // Their handlers answer without I/O; the two answers behind the first are not on the socket.
      await settled(() => session.fg.totals('GET /big')?.success === 3, 'the three handlers answering');
      await session.clock.advance(1000);
      pipelining!.destroy();
      await responses.connectionsClosed.reached(1);
      expect(concurrency('GET /big')).toBe(0);
      expect(session.fg.totals('GET /big')?.pass).toBe(3);
      expect(session.fg.totals('GET /big')).toMatchObject({ success: 3, rtSumMs: 0 });
      expect(session.fg.circuitState('GET /big')[0]!.state).toBe('closed');
    });

    it('still hold a concurrency slot until they have read their answer or left (#24)', async () => {
      const server = await start({
        routes: [{ ...big, guard: { rateLimit: { metric: 'concurrency', threshold: 2 }, timeoutMs: 500 } }],
      });
      const readers = slowReaders(server, 2);
      await responses.ended.reached(2);
      await session.clock.advance(1000);
      await request(server).get('/big').expect(429);
      readers[0]!.resume();
      await readers[0]!.receives(BIG.length + 1);
      // Closed: the 429, then the first reader's answer, read whole (the second's waits unread).
      await responses.closed.reached(2);
      expect(concurrency('GET /big')).toBe(1);
      readers[1]!.destroy();
      await responses.closed.reached(3);
      expect(concurrency('GET /big')).toBe(0);
      await request(server).get('/big').expect(200);
    });
  });

  describe(`${harness.name}: clients that send slowly`, () => {
    const upload = {
      method: 'POST',
      path: '/upload',
      handler: async (req: { body(): Promise<string> }) => ({ body: { length: (await req.body()).length } }),
    } as const;

    it('are answered 408 at the timeout, counted as no error, and open no errorRatio breaker (#24)', async () => {
      const server = await start({
        routes: [{ ...upload, guard: { circuitBreaker: ERROR_RATIO, timeoutMs: 500 } }],
      });
      const admitted = passes(session.fg, 'POST /upload');
      const senders = Array.from({ length: SLOW_CLIENTS }, () => openRaw(server, partialUpload(1000, 10)));
      session.clients.push(...senders);
      await admitted.reached(SLOW_CLIENTS);
      expect(concurrency('POST /upload')).toBe(SLOW_CLIENTS);
      await session.clock.advance(500);
      await Promise.all(senders.map((sender) => sender.closed));
      for (const sender of senders) {
        expect(sender.statuses).toEqual([408]);
        expect(sender.received()).toMatch(/\r\nconnection: close\r\n/i);
        expect(sender.received()).toContain('"code":"ERR_TIMEOUT"');
      }
      await responses.closed.reached(SLOW_CLIENTS);
      // Each handler still reading its body settles once the rest is cut off: no I/O.
      await settled(() => concurrency('POST /upload') === 0, 'the uploads giving their slots back');
      expect(session.fg.totals('POST /upload')).toMatchObject({ pass: SLOW_CLIENTS, success: 0, error: 0, timeout: 0 });
      expect(session.fg.circuitState('POST /upload')[0]!.state).toBe('closed');
      const whole = await request(server).post('/upload').type('text/plain').send('a whole body');
      expect(whole.status).toBe(200);
      expect(whole.body).toEqual({ length: 12 });
    });

    it('whose body has come are answered 503 at the timeout as usual, a failure (#24)', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let received!: () => void;
      const bodyRead = new Promise<void>((resolve) => (received = resolve));
      const server = await start({
        routes: [
          {
            method: 'POST',
            path: '/upload',
            guard: { circuitBreaker: ERROR_RATIO, timeoutMs: 500 },
            handler: async (req) => {
              await req.body();
              received();
              await gate;
              return { body: { late: true } };
            },
          },
        ],
      });
      const client = openRaw(server, rawRequest('POST', '/upload', { 'Content-Type': 'text/plain' }, 'complete'));
      session.clients.push(client);
      await bodyRead;
      await session.clock.advance(500);
      await client.answered(1);
      expect(client.statuses).toEqual([503]);
      expect(session.fg.totals('POST /upload')).toMatchObject({ error: 1, timeout: 1 });
      // Its answer closed, the request keeps its slot until its handler settles.
      await responses.closed.reached(1);
      expect(concurrency('POST /upload')).toBe(1);
      release();
      await settled(() => concurrency('POST /upload') === 0, 'the handler settling');
    });
  });
}
