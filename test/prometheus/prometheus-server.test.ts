import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { Registry } from 'prom-client';
import { createApp, PAYMENTS_BREAKER, SEARCH_LIMIT } from '../../examples/observability/app';
import { startPrometheus, type PrometheusServer, type QuerySample } from './support/prometheus-server';

// A real Prometheus (Debian's package, or FLOODGATE_PROMETHEUS_BIN) scrapes the observability
// example over loopback; the test asks Prometheus's HTTP API what it stored. The app's engine
// runs on a ManualClock, so what the traffic causes is exact: time never moves, no window
// rolls, the breaker never half-opens.

jest.setTimeout(90_000);

let fg: Floodgate;
let server: Server;
let port: number;
let prometheus: PrometheusServer;

beforeAll(async () => {
  fg = new Floodgate({ clock: new ManualClock() });
  server = createApp({ floodgate: fg, registry: new Registry() }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  prometheus = await startPrometheus([`127.0.0.1:${port}`]);
});

afterAll(async () => {
  await prometheus?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const get = async (path: string): Promise<number> => (await fetch(`http://127.0.0.1:${port}${path}`)).status;
const only = (samples: QuerySample[]): number | undefined => (samples.length === 1 ? samples[0]!.value : undefined);

describe('a real Prometheus scraping the observability example', () => {
  it('stores the blocks the traffic caused and the breaker it opened', async () => {
    const search: number[] = [];
    for (let i = 0; i < 12; i++) search.push(await get(`/search?q=${i}`));
    const payments: number[] = [];
    for (let i = 0; i < 6; i++) payments.push(await get('/payments'));
    const tooMany = search.filter((status) => status === 429).length;
    const failed = payments.filter((status) => status === 502).length;
    const unavailable = payments.filter((status) => status === 503).length;
    // What the example's rules say the traffic must cause (the clock never moves).
    expect([tooMany, failed, unavailable]).toEqual([
      12 - SEARCH_LIMIT.threshold,
      PAYMENTS_BREAKER.threshold + 1,
      6 - PAYMENTS_BREAKER.threshold - 1,
    ]);

    const blocked = await prometheus.waitFor(
      'floodgate_blocks_total{job="floodgate",resource="GET /search",kind="flow",rule="flow#0"}',
      (s) => only(s) === tooMany,
    );
    expect(only(blocked)).toBe(tooMany);
    const open = await prometheus.waitFor(
      'floodgate_circuit_breaker_state{job="floodgate",resource="GET /payments",rule="circuitBreaker#0"}',
      (s) => only(s) === 1,
    );
    expect(only(open)).toBe(1);
    const opened = await prometheus.query(
      'floodgate_circuit_breaker_transitions_total{resource="GET /payments",from="closed",to="open"}',
    );
    expect(only(opened)).toBe(1);
    const refused = await prometheus.query('floodgate_blocks_total{resource="GET /payments",kind="circuitBreaker"}');
    expect(only(refused)).toBe(unavailable);
    const errors = await prometheus.query('floodgate_errors_total{resource="GET /payments"}');
    expect(only(errors)).toBe(failed);
  });

  it('answers the README queries: block rate by resource, and breakers open now', async () => {
    const openNow = await prometheus.waitFor('floodgate_circuit_breaker_state == 1', (s) => s.length === 1);
    expect(openNow.map((s) => [s.metric.resource, s.metric.rule])).toEqual([['GET /payments', 'circuitBreaker#0']]);
    // Rates need two scrapes of the counters; with the clock still, the blocks came at once.
    const rate = await prometheus.waitFor(
      'sum by (resource) (rate(floodgate_blocks_total[1m]))',
      (s) => s.length === 2,
    );
    expect(rate.map((s) => s.metric.resource).sort()).toEqual(['GET /payments', 'GET /search']);
  });

  it('keeps a resource name with quotes, backslashes and a newline intact through the scrape', async () => {
    const name = 'job "nightly" \\ export\nv2';
    fg.entry(name).exit();
    const samples = await prometheus.waitFor(
      `floodgate_passes_total{resource=${JSON.stringify(name)}}`,
      (s) => only(s) === 1,
    );
    expect(samples[0]!.metric.resource).toBe(name);
  });

  it('stores the would-be blocks of a shadow rule by rule, and no block', async () => {
    fg.declareRules({ flow: [{ resource: 'nightly shadow', threshold: 1, mode: 'shadow' }] });
    for (let i = 0; i < 3; i++) fg.entry('nightly shadow').exit();
    const wouldBlock = await prometheus.waitFor(
      'floodgate_would_block_total{resource="nightly shadow",kind="flow",rule="flow#0"}',
      (s) => only(s) === 2,
    );
    expect(only(wouldBlock)).toBe(2);
    expect(await prometheus.query('floodgate_blocks_total{resource="nightly shadow"}')).toEqual([]);
  });
});
