/**
 * Floodgate observed: an Express API whose guards report to Prometheus (`GET /metrics`, through
 * `@floodgate/prometheus`) and, when given a meter provider, to OpenTelemetry (the same
 * instruments, through `@floodgate/opentelemetry`), with a `floodgate.block` event on the
 * request's span for each blocked request.
 * - `GET /search`: at most 5 requests per second (then 429);
 * - `GET /payments`: a payment provider that is down; a circuit breaker opens after 3 failures
 *   in a row and answers 503 for 30 s.
 * `createApp()` does not listen; main.ts runs it against a burst of traffic and prints what the
 * metrics say. test/examples/observability.test.ts drives it, and
 * test/prometheus/prometheus-server.test.ts has a real Prometheus scrape it.
 */
import express, { type Express } from 'express';
import { Floodgate } from '@floodgate/core';
import { circuitBreaker, rateLimit } from '@floodgate/express';
import { instrumentFloodgate } from '@floodgate/opentelemetry';
import { collectMetrics } from '@floodgate/prometheus';
import { trace, type MeterProvider } from '@opentelemetry/api';
import { Registry } from 'prom-client';

/** Options of {@link createApp}. */
export interface ObservabilityAppOptions {
  /** The engine. @defaultValue a new Floodgate with the monotonic clock */
  readonly floodgate?: Floodgate;
  /** Where `GET /metrics` reads from. @defaultValue a new prom-client Registry */
  readonly registry?: Registry;
  /** Reports to OpenTelemetry too when given. */
  readonly meterProvider?: MeterProvider;
}

/** `GET /search`: 5 requests per second. */
export const SEARCH_LIMIT = { threshold: 5 } as const;

/** `GET /payments`: opens after more than 2 failures among at least 3 calls, for 30 s. */
export const PAYMENTS_BREAKER = {
  strategy: 'errorCount',
  threshold: 2,
  minRequestAmount: 3,
  statIntervalMs: 10_000,
  retryTimeoutMs: 30_000,
} as const;

/** Builds the app (without listening). */
export function createApp(options: ObservabilityAppOptions = {}): Express {
  const fg = options.floodgate ?? new Floodgate();
  const registry = options.registry ?? new Registry();
  collectMetrics(fg, { registry });
  if (options.meterProvider !== undefined) instrumentFloodgate(fg, { meterProvider: options.meterProvider });
  const app = express();

  // One span per request (what HTTP auto-instrumentation would make), so a block shows in the trace.
  const tracer = trace.getTracer('examples/observability');
  app.use((req, res, next) => {
    tracer.startActiveSpan(`${req.method} ${req.path}`, (span) => {
      res.on('close', () => span.end());
      next();
    });
  });

  app.get(
    '/search',
    rateLimit({ floodgate: fg, ...SEARCH_LIMIT }),
    (req, res) => void res.json({ results: [`${String(req.query.q ?? '')} (1)`] }),
  );

  app.get('/payments', circuitBreaker({ floodgate: fg, ...PAYMENTS_BREAKER }), (_req, res) => {
    // The provider is down: every call fails, which the breaker counts.
    res.status(502).json({ error: 'payment provider unavailable' });
  });

  app.get('/metrics', (_req, res, next) => {
    registry.metrics().then((text) => void res.type(registry.contentType).send(text), next);
  });
  return app;
}
