import { Floodgate, isBlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { HttpGuard } from '@floodgate/core/http';
import { GuardedRequest } from '../../../packages/core/src/http/guarded-request';
import { FakeResponse, FakeSocket } from './fake-response';

type Req = Record<string, never>;

function setup(routes: Record<string, unknown>): { fg: Floodgate; clock: ManualClock; guard: HttpGuard<Req, never> } {
  const clock = new ManualClock(1000);
  const fg = new Floodgate({ clock });
  return { fg, clock, guard: HttpGuard.resilience<Req, never>({ floodgate: fg, routes }, 'resilience()') };
}

describe('GuardedRequest', () => {
  it('ends a request whose response never closes when its connection closes (a pipelined request left behind)', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { metric: 'concurrency', threshold: 5 } } });
    const socket = new FakeSocket();
    const current = new FakeResponse(socket);
    const queued = [new FakeResponse(socket, { waiting: true }), new FakeResponse(socket, { waiting: true })];
    for (const res of [current, ...queued]) expect(guard.guardRoutes(res, {}, 'GET', '/a')).toBeUndefined();
    expect(fg.stats('GET /a')!.concurrency).toBe(3);
    current.abort();
    socket.close();
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
    expect(fg.totals('GET /a')).toMatchObject({ pass: 3, success: 3, error: 0 });
  });

  it('ends a request once when both its response and its connection close', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 5 } } });
    const socket = new FakeSocket();
    const res = new FakeResponse(socket, { waiting: true });
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.finish(500);
    socket.close();
    expect(fg.totals('GET /a')).toMatchObject({ pass: 1, success: 1, error: 1 });
  });

  it('listens to a connection once, however many waiting requests it carries, and forgets each that ends', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 1000 } } });
    const socket = new FakeSocket();
    for (let i = 0; i < 100; i++) {
      const res = new FakeResponse(socket, { waiting: true });
      guard.guardRoutes(res, {}, 'GET', '/a');
      res.finish(200);
    }
    expect(socket.listenerCount('close')).toBe(1);
    socket.close();
    expect(fg.totals('GET /a')).toMatchObject({ pass: 100, success: 100 });
  });

  it('enters nothing for a request whose client left before it was guarded', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 5 } } });
    const socket = new FakeSocket();
    socket.close();
    expect(guard.guardRoutes(new FakeResponse(socket), {}, 'GET', '/a')).toBe('aborted');
    expect(fg.stats('GET /a')?.lastSecond.pass ?? 0).toBe(0);
  });

  it('listens to nothing for a request refused before it held anything, and to its response once it holds an entry', () => {
    const { fg, guard } = setup({
      'GET /a': { rateLimit: { threshold: 1 } },
      'GET /*': { rateLimit: { threshold: 0 } },
    });
    const socket = new FakeSocket();
    const refused = new FakeResponse(socket, { waiting: true });
    expect(isBlockError(guard.guardRoutes(refused, {}, 'GET', '/b'))).toBe(true);
    expect([refused.listenerCount('close'), socket.listenerCount('close')]).toEqual([0, 0]);
    // Admitted by the first route, refused by the second: it listened while it held the entry.
    const both = new FakeResponse(socket, { waiting: true });
    expect(isBlockError(guard.guardRoutes(both, {}, 'GET', '/a'))).toBe(true);
    expect([both.listenerCount('close'), socket.listenerCount('close')]).toEqual([1, 1]);
    expect(fg.stats('GET /a')?.lastSecond.pass ?? 0).toBe(0);
  });

  it('enters nothing for a request whose response was already sent (a middleware went on after answering)', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { metric: 'concurrency', threshold: 5 } } });
    const res = new FakeResponse();
    res.writeHead(200, {});
    res.end('done');
    expect(guard.guardRoutes(res, {}, 'GET', '/a')).toBe('aborted');
    expect(fg.stats('GET /a')?.concurrency ?? 0).toBe(0);
  });

  it('judges a request its handler answered by the status, also when the client leaves before the bytes are out', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 5 } } });
    const answered = new FakeResponse();
    guard.guardRoutes(answered, {}, 'GET', '/a');
    answered.writeHead(503, {});
    answered.end('down');
    answered.abort();
    const unanswered = new FakeResponse();
    guard.guardRoutes(unanswered, {}, 'GET', '/a');
    unanswered.abort();
    expect(fg.totals('GET /a')).toMatchObject({ pass: 2, success: 2, error: 1 });
  });

  it('guards a response without a connection, ending it on its close', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 5 } } });
    const res = new FakeResponse();
    (res as { req: unknown }).req = undefined;
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.finish(200);
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
  });

  it('leaves the connection alone for a response already on it (its own close covers the client leaving)', () => {
    const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 5 } } });
    const socket = new FakeSocket();
    const res = new FakeResponse(socket);
    guard.guardRoutes(res, {}, 'GET', '/a');
    expect(socket.listenerCount('close')).toBe(0);
    res.abort();
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
  });

  describe('a response whose prototype was swapped (as Express swaps it)', () => {
    /** A response as Express hands it over: its prototype is an object made by `Object.create`. */
    function swapped(socket: FakeSocket, options?: { readonly waiting?: boolean }): FakeResponse {
      const res = new FakeResponse(socket, options);
      Object.setPrototypeOf(res, Object.create(FakeResponse.prototype));
      return res;
    }
    const STATE = Symbol.for('floodgate.http.guardedRequest');

    it('keeps its state on the connection, not on the response, and finds it there', () => {
      const { fg, guard } = setup({
        'GET /a': { rateLimit: { metric: 'concurrency', threshold: 5 } },
        '*': { rateLimit: { threshold: 100 } },
      });
      const socket = new FakeSocket();
      const res = swapped(socket);
      expect(guard.guardRoutes(res, {}, 'GET', '/a')).toBeUndefined();
      expect(Object.getOwnPropertySymbols(res)).not.toContain(STATE);
      expect(GuardedRequest.find(res)?.entries.map((e) => e.resource)).toEqual(['GET /a', '* /*']);
      // A second guard on the same request shares the state: it enters nothing twice.
      expect(guard.guardRoutes(res, {}, 'GET', '/a')).toBeUndefined();
      expect(fg.stats('GET /a')!.concurrency).toBe(1);
      res.finish(200);
      expect(fg.stats('GET /a')!.concurrency).toBe(0);
      expect(fg.totals('* /*')).toMatchObject({ pass: 1, success: 1 });
      expect(GuardedRequest.find(res)).toBeUndefined();
    });

    it('tells the requests open on one connection apart, and forgets each that ends', () => {
      const { fg, guard } = setup({ 'GET /a': { rateLimit: { metric: 'concurrency', threshold: 5 } } });
      const socket = new FakeSocket();
      const responses = [swapped(socket), swapped(socket, { waiting: true }), swapped(socket, { waiting: true })];
      for (const res of responses) guard.guardRoutes(res, {}, 'GET', '/a');
      expect(new Set(responses.map((res) => GuardedRequest.find(res))).size).toBe(3);
      expect(fg.stats('GET /a')!.concurrency).toBe(3);
      responses[1]!.finish(503);
      expect(GuardedRequest.find(responses[1]!)).toBeUndefined();
      expect(GuardedRequest.find(responses[0]!)?.closed).toBe(false);
      expect(fg.totals('GET /a')).toMatchObject({ success: 1, error: 1 });
      socket.close();
      expect(fg.stats('GET /a')!.concurrency).toBe(0);
      expect(socket.listenerCount('close')).toBe(1);
    });

    it('enters nothing for one whose client left before it was guarded, and keeps nothing of it', () => {
      const { fg, guard } = setup({ 'GET /a': { rateLimit: { threshold: 5 } } });
      const socket = new FakeSocket();
      socket.close();
      expect(guard.guardRoutes(swapped(socket), {}, 'GET', '/a')).toBe('aborted');
      expect(fg.stats('GET /a')?.lastSecond.pass ?? 0).toBe(0);
      expect(socket.listenerCount('close')).toBe(0);
    });
  });
});
