import type { BlockError, Refusal } from '../kernel/errors';
import { HTTP_DEFAULTS } from './http-defaults';
import { rateLimitHeaders, type RateLimitHeadersDraft } from './rate-limit-headers';

/**
 * An RFC 9457 problem details body, with Floodgate's stable `code` and the guarded `resource`.
 * `violated-policies` (the IETF RateLimit draft's extension member) names the draft-8 policy
 * that refused the request, when there is one.
 */
export interface ProblemDetails {
  /** The problem type URI: the IETF `quota-exceeded` or `temporary-reduced-capacity` type, or `about:blank`. */
  readonly type: string;
  /** A short, fixed summary of the problem type. */
  readonly title: string;
  /** The HTTP status, repeated. */
  readonly status: number;
  /** What happened, in words (never the caller's parameter values). */
  readonly detail: string;
  /** The block error's stable code, e.g. `ERR_FLOW_BLOCKED`. */
  readonly code: string;
  /** The guarded resource, e.g. `GET /users/:id`. */
  readonly resource: string;
  /** The draft-8 names of the policies that refused the request (`'flow'`, `'hotspot'`). */
  readonly 'violated-policies'?: readonly string[];
}

/** What a blocked request is answered with: status, headers and a problem details body. */
export interface BlockResponse {
  /** 429 for flow and hotspot blocks, 503 for an open circuit and system protection, 403 for authority. */
  readonly status: number;
  /**
   * `Content-Type: application/problem+json; charset=utf-8`, `Retry-After` (whole seconds,
   * rounded up) where the wait is known, and the IETF RateLimit headers for QPS rules.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The body (frozen: the same object answers every block of one kind on one resource). */
  readonly body: ProblemDetails;
  /** `body` serialised as JSON, ready to send (serialised once per kind of block and resource). */
  readonly json: string;
}

/** Options of {@link blockResponse}. */
export interface BlockResponseOptions {
  /** The form of the RateLimit headers, or `false` for none. @defaultValue 'draft-8' */
  readonly headers?: RateLimitHeadersDraft | false;
}

const PROBLEM_TYPES = 'https://iana.org/assignments/http-problem-types#';

interface Shape {
  readonly status: number;
  readonly type: string;
  readonly title: string;
}

/** How each kind of refusal is answered: the block error says why it refused, this says it in HTTP. */
const SHAPES: { readonly [R in Refusal]: Shape } = {
  quota: {
    status: 429,
    type: `${PROBLEM_TYPES}quota-exceeded`,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
  },
  capacity: {
    status: 503,
    type: `${PROBLEM_TYPES}temporary-reduced-capacity`,
    title: 'Request cannot be satisfied due to temporary server capacity constraints',
  },
  forbidden: { status: 403, type: 'about:blank', title: 'Forbidden' },
};

/**
 * The one mapping from a block to an HTTP response, shared by every adapter so all answer
 * alike: 429 for flow and hotspot blocks, 503 for an open circuit and system protection, 403
 * for authority; `Retry-After` in whole seconds rounded up where `retryAfterMs` is known; the
 * IETF RateLimit headers for QPS rules (draft-8 by default); an `application/problem+json`
 * body with `type`, `title`, `status`, `detail`, `code` and `resource`.
 *
 * @example
 * const { status, headers, json } = blockResponse(error);
 * res.writeHead(status, headers).end(json);
 */
export function blockResponse(error: BlockError, options?: BlockResponseOptions): BlockResponse {
  const shape = SHAPES[error.refusal];
  const draft = options?.headers === undefined ? HTTP_DEFAULTS.headers : options.headers;
  const headers: Record<string, string> = { 'Content-Type': HTTP_DEFAULTS.contentType };
  if (error.retryAfterMs !== undefined) headers['Retry-After'] = String(Math.max(0, Math.ceil(error.retryAfterMs / 1000)));
  let violated: readonly string[] | undefined;
  if (draft !== false) {
    const limits = rateLimitHeaders(error, draft);
    if (limits !== undefined) {
      Object.assign(headers, limits);
      if (draft === 'draft-8') violated = [error.quota()!.name];
    }
  }
  const { body, json } = problemOf(shape, error, violated);
  return { status: shape.status, headers, body, json };
}

/** Most cached problem bodies; past it the cache starts afresh (resources are bounded anyway). */
const MAX_CACHED_BODIES = 10_000;
const bodies = new Map<string, { readonly body: ProblemDetails; readonly json: string }>();

/**
 * The problem body of a kind of block on a resource, built and serialised once: under attack
 * most requests are blocked, and `JSON.stringify` would otherwise run on each.
 */
function problemOf(shape: Shape, error: BlockError, violated: readonly string[] | undefined): { readonly body: ProblemDetails; readonly json: string } {
  const detail = error.detail;
  const key = `${detail}\n${error.code}\n${violated?.[0] ?? ''}\n${error.resource}`;
  let cached = bodies.get(key);
  if (cached === undefined) {
    const body: ProblemDetails = Object.freeze({
      type: shape.type,
      title: shape.title,
      status: shape.status,
      detail,
      code: error.code,
      resource: error.resource,
      ...(violated === undefined ? {} : { 'violated-policies': Object.freeze(violated) }),
    });
    if (bodies.size >= MAX_CACHED_BODIES) bodies.clear();
    cached = { body, json: JSON.stringify(body) };
    bodies.set(key, cached);
  }
  return cached;
}
