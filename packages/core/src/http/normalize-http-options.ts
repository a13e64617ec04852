import { floodgate as defaultFloodgate, type Floodgate } from '../engine/floodgate';
import type { BlockError } from '../kernel/errors';
import { show, type RuleReader } from '../kernel/rule-reader';
import { HTTP_DEFAULTS } from './http-defaults';
import type { RateLimitHeadersDraft } from './rate-limit-headers';

/** The option names every HTTP adapter factory takes ({@link HttpOptions}). */
export const HTTP_OPTION_KEYS = Object.freeze(['floodgate', 'origin', 'onBlock', 'fallback', 'headers', 'isFailure'] as const);

/** {@link HttpOptions} validated, with every default resolved. */
export interface NormalizedHttpOptions<Req, F> {
  readonly engine: Floodgate;
  readonly origin: ((req: Req) => string) | undefined;
  readonly onBlock: ((error: BlockError, req: Req) => void) | undefined;
  readonly fallback: F | undefined;
  readonly headers: RateLimitHeadersDraft | false;
  readonly isFailure: (status: number, error: unknown) => boolean;
}

const DRAFTS: readonly RateLimitHeadersDraft[] = ['draft-6', 'draft-7', 'draft-8'];

/**
 * The default `isFailure`: a status >= 500, or a thrown error that is not an HTTP client error
 * (`status` / `statusCode` within [400, 499], as http-errors, Koa's `ctx.throw` and Fastify
 * set).
 */
export function defaultIsFailure(status: number, error: unknown): boolean {
  if (status >= HTTP_DEFAULTS.failureStatus) return true;
  if (error === undefined) return false;
  const e = error as { readonly status?: unknown; readonly statusCode?: unknown };
  const code = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  return !(code !== undefined && code >= 400 && code < 500);
}

/**
 * Reads the common HTTP options from `obj` (unknown keys are the caller's to check), recording
 * problems in `reader`.
 */
export function readHttpOptions<Req, F>(obj: Record<string, unknown>, path: string, reader: RuleReader): NormalizedHttpOptions<Req, F> {
  const engine = obj.floodgate;
  if (engine !== undefined && !isEngine(engine)) reader.fail(at(path, 'floodgate'), `must be a Floodgate engine, got ${show(engine)}`);
  const headers = obj.headers;
  if (headers !== undefined && headers !== false && !DRAFTS.includes(headers as RateLimitHeadersDraft)) {
    reader.fail(at(path, 'headers'), `must be one of 'draft-6', 'draft-7', 'draft-8' or false, got ${show(headers)}`);
  }
  return {
    engine: isEngine(engine) ? engine : defaultFloodgate,
    origin: readFunction(obj, 'origin', path, reader) as NormalizedHttpOptions<Req, F>['origin'],
    onBlock: readFunction(obj, 'onBlock', path, reader) as NormalizedHttpOptions<Req, F>['onBlock'],
    fallback: readFunction(obj, 'fallback', path, reader) as F | undefined,
    headers: headers === false || DRAFTS.includes(headers as RateLimitHeadersDraft) ? (headers as RateLimitHeadersDraft | false) : HTTP_DEFAULTS.headers,
    isFailure: (readFunction(obj, 'isFailure', path, reader) as NormalizedHttpOptions<Req, F>['isFailure'] | undefined) ?? defaultIsFailure,
  };
}

/** An optional function option; a problem is recorded when it is given and not a function. */
export function readFunction(obj: Record<string, unknown>, key: string, path: string, reader: RuleReader): ((...args: never[]) => unknown) | undefined {
  const value = obj[key];
  if (value === undefined || typeof value === 'function') return value as ((...args: never[]) => unknown) | undefined;
  reader.fail(at(path, key), `must be a function, got ${show(value)}`);
  return undefined;
}

/** `path.key`, or `key` at the top level. */
export function at(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function isEngine(value: unknown): value is Floodgate {
  const engine = value as Partial<Floodgate> | null;
  return (
    typeof engine === 'object' &&
    engine !== null &&
    typeof engine.tryEntry === 'function' &&
    typeof engine.enter === 'function' &&
    typeof engine.declareRules === 'function' &&
    typeof engine.getRules === 'function'
  );
}
