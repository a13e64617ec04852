import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { createApp } from '../../examples/observability/app';
import { main } from '../../examples/observability/main';

describe('examples/observability', () => {
  it('reports the 429s and the open breaker its burst causes to Prometheus, OpenTelemetry and the spans', async () => {
    const run = await main(new Floodgate({ clock: new ManualClock() }));
    expect(run.statuses).toEqual({ 200: 5, 429: 3, 502: 3, 503: 2 });
    expect(run.prometheus).toEqual([
      'floodgate_blocks_total{kind="flow",rule="flow#0",resource="GET /search"} 3',
      'floodgate_blocks_total{kind="circuitBreaker",rule="circuitBreaker#0",resource="GET /payments"} 2',
      'floodgate_circuit_breaker_state{rule="circuitBreaker#0",resource="GET /payments"} 1',
    ]);
    expect(run.openTelemetry).toEqual([
      'GET /search flow flow#0: 3',
      'GET /payments circuitBreaker circuitBreaker#0: 2',
    ]);
    expect(run.spanEvents).toEqual([
      ...Array<string>(3).fill('GET /search: flow#0'),
      ...Array<string>(2).fill('GET /payments: circuitBreaker#0'),
    ]);
  });

  it('serves /metrics in the Prometheus text format with its own engine and registry when given none', async () => {
    const app = createApp();
    await request(app).get('/search?q=x').expect(200);
    const metrics = await request(app).get('/metrics').expect(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0.0.4/);
    expect(metrics.text).toContain('floodgate_passes_total{resource="GET /search"} 1');
  });
});
