/**
 * `@floodgate/opentelemetry`: Floodgate's metrics through the OpenTelemetry metrics API, read from
 * the engine at collection, and a span event on each blocked call. One call:
 * `instrumentFloodgate(fg, { meterProvider })`.
 * @packageDocumentation
 */
export {
  instrumentFloodgate,
  OPENTELEMETRY_DEFAULTS,
  METER_NAME,
  BLOCK_SPAN_EVENT,
  type OpenTelemetryOptions,
} from './instrument-floodgate';
