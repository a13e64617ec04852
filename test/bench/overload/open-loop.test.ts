/**
 * The bench's open-loop driver against a real node:http server: stopped by its signal (the
 * overload suite's ceilings stop their stream of refusals when the measured phase ends).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openLoop } from '../../../bench/overload/open-loop';

describe('openLoop with a signal', () => {
  let server: Server;
  let answered = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      answered++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const port = (): number => (server.address() as AddressInfo).port;

  it('sends nothing when its signal has aborted before', async () => {
    const before = answered;
    const result = await openLoop(port(), { ratePerSecond: 1000, count: 10, signal: AbortSignal.abort() });
    expect(result.sent).toBe(0);
    expect(result.statuses).toEqual({});
    expect(answered).toBe(before);
  });

  it('stops sending when its signal aborts, and ends once every request sent has ended', async () => {
    const stop = new AbortController();
    const before = answered;
    server.once('request', () => stop.abort()); // at the first request the server reads
    const result = await openLoop(port(), {
      ratePerSecond: 1e9,
      count: Number.MAX_SAFE_INTEGER,
      maxInFlight: 4,
      signal: stop.signal,
    });
    expect(result.sent).toBeGreaterThan(0);
    expect(result.sent).toBeLessThan(Number.MAX_SAFE_INTEGER);
    expect(result.statuses).toEqual({ '200': result.sent });
    expect(answered - before).toBe(result.sent);
  });
});
