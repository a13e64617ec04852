import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/**
 * What the outbound guard reads from HTTP requests and answers to decide on retries, failures
 * and pauses: whether a request body can be sent again, whether a header is present, what
 * `Retry-After` asks for, and which errors are worth another attempt.
 */

/** Most seconds a `Retry-After` is read as (a day): larger values are read as this. */
const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * Errors of the connection or the exchange that another attempt may not meet: refused, reset or
 * broken connections, unreachable hosts, DNS failures, undici's socket, connect and headers
 * timeouts (undici's `RetryHandler` retries the same ones).
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

/** Whether `error` (an attempt's failure before its response headers) is worth another attempt. */
export function isRetryableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_TIMEOUT') return true;
  if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== error && cause !== undefined && isRetryableError(cause);
}

/**
 * Whether a request body can be sent again as it is: none, a string or bytes. A stream, an
 * iterable or form data is consumed by the first attempt, so such requests are never retried
 * nor hedged.
 */
export function isReplayable(body: Dispatcher.DispatchOptions['body']): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
}

/** Whether request `headers` (in any of undici's forms) hold `name` (lower case). */
export function hasHeader(headers: Dispatcher.DispatchOptions['headers'], name: string): boolean {
  if (headers === undefined || headers === null) return false;
  if (Array.isArray(headers)) {
    // Flat `[name, value, name, value]`, or pairs.
    for (let i = 0; i < headers.length; i++) {
      const item = headers[i] as unknown;
      if (Array.isArray(item)) {
        if (String(item[0]).toLowerCase() === name) return true;
      } else if (i % 2 === 0 && String(item).toLowerCase() === name) return true;
    }
    return false;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const pair of headers as Iterable<[string, unknown]>) if (String(pair[0]).toLowerCase() === name) return true;
    return false;
  }
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name && (headers as Record<string, unknown>)[key] !== undefined) return true;
  }
  return false;
}

/** The first value of a response header. */
function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What an answer's `Retry-After` asks for, in ms: delay-seconds (`120`), or an HTTP-date, read
 * against the answer's own `Date` header (so no local wall clock enters), or against `wallNow`
 * when it has none. At most a day; `undefined` when absent or unreadable. RFC 9110 §10.2.3.
 */
export function retryAfterMs(headers: IncomingHttpHeaders, wallNow: () => number): number | undefined {
  const value = first(headers['retry-after'])?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value), MAX_RETRY_AFTER_SECONDS) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const date = first(headers.date);
  const reference = date === undefined ? Number.NaN : Date.parse(date);
  const ms = at - (Number.isNaN(reference) ? wallNow() : reference);
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_SECONDS * 1000);
}
