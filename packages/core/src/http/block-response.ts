import type { BlockError, QuotaPolicy, Refusal, TimeoutError } from '../kernel/errors';
import { HTTP_DEFAULTS } from './http-options';
import { quotaHeaders, retryAfterSeconds, type RateLimitHeadersDraft } from './rate-limit-headers';

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
  /** The error's stable code, e.g. `ERR_FLOW_BLOCKED` (`ERR_TIMEOUT` for a timeout). */
  readonly code: string;
  /** The guarded resource, e.g. `GET /users/:id`. */
  readonly resource: string;
  /** The draft-8 names of the policies that refused the request (`'flow'`, `'hotspot'`). */
  readonly 'violated-policies'?: readonly string[];
}

/** What a blocked (or timed-out) request is answered with: status, headers and a problem details body. */
export interface BlockResponse {
  /** 429 for flow and hotspot blocks, 503 for an open circuit and system protection, 403 for authority; 503 or 408 for a route's timeout. */
  readonly status: number;
  /**
   * `Content-Type: application/problem+json; charset=utf-8`, the `Content-Length` of `json`,
   * `Retry-After` (whole seconds, rounded up, at most `MAX_HEADER_VALUE`) where the wait is known,
   * and the IETF RateLimit headers for QPS rules: ready for `res.writeHead(status, headers).end(json)`. Frozen: blocks
   * alike share it.
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
 * for authority; `Retry-After` in whole seconds rounded up where `retryAfterMs` is known (at most
 * `MAX_HEADER_VALUE`, 2^31 − 1, like every number of these headers); the
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
  const quota = draft === false ? undefined : error.quota();
  const problem = problemOf(
    shape,
    error.detail,
    error.code,
    error.resource,
    draft === 'draft-8' ? quota?.name : undefined,
  );
  const retryAfter = retryAfterSeconds(error.retryAfterMs);
  return {
    status: shape.status,
    headers: headersOf(problem, draft, retryAfter, quota),
    body: problem.body,
    json: problem.json,
  };
}

/**
 * The headers of a block of `problem`, built again only when the wait, the quota or the draft
 * differ from the last block's: a flood meets the same ones, and header values built per block
 * cost twice (concatenated, then flattened when Node validates them: about 0.25 µs of a 429).
 */
function headersOf(
  problem: Problem,
  draft: RateLimitHeadersDraft | false,
  retryAfter: number | undefined,
  quota: QuotaPolicy | undefined,
): Readonly<Record<string, string>> {
  const last = problem.headers;
  if (
    last !== undefined &&
    last.draft === draft &&
    last.retryAfter === retryAfter &&
    last.quota === quota?.quota &&
    last.windowSeconds === quota?.windowSeconds
  ) {
    return last.headers;
  }
  const headers: Record<string, string> = {
    'Content-Type': HTTP_DEFAULTS.contentType,
    'Content-Length': problem.length,
  };
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (quota !== undefined && draft !== false)
    Object.assign(headers, quotaHeaders(quota, 0, retryAfter ?? quota.windowSeconds, draft));
  problem.headers = {
    draft,
    retryAfter,
    quota: quota?.quota,
    windowSeconds: quota?.windowSeconds,
    headers: Object.freeze(headers),
  };
  return problem.headers.headers;
}

/** The `detail` of a timeout's problem body. */
const TIMEOUT_DETAIL = 'The request did not complete within the time allowed to this resource.';

/**
 * The response to a request its route's `timeoutMs` cut short: 503, the IETF
 * `temporary-reduced-capacity` problem type, code `ERR_TIMEOUT`, the resource whose timeout
 * elapsed, no `Retry-After` (the wait is not known).
 *
 * @example
 * const { status, headers, json } = timeoutResponse(new TimeoutError('GET /report', 2000));
 */
export function timeoutResponse(error: TimeoutError): BlockResponse {
  const shape = SHAPES.capacity;
  const problem = problemOf(shape, TIMEOUT_DETAIL, error.code, error.resource, undefined);
  return {
    status: shape.status,
    headers: headersOf(problem, false, undefined, undefined),
    body: problem.body,
    json: problem.json,
  };
}

/** The `detail` of a request timeout's problem body. */
const REQUEST_TIMEOUT_DETAIL = 'The request was not received completely within the time allowed to this resource.';
const REQUEST_TIMEOUT: Shape = { status: 408, type: 'about:blank', title: 'Request Timeout' };

/**
 * The response to a request its route's `timeoutMs` cut short while the client was still
 * sending it (its body not received whole): 408, `about:blank`, code `ERR_TIMEOUT`, the resource
 * whose timeout elapsed, and `Connection: close` (RFC 9110: the server closes the connection
 * rather than wait for the rest of the request). The time was the client's, so the request is
 * no failure and no slow call for circuit breakers.
 *
 * @example
 * const { status, headers, json } = requestTimeoutResponse(new TimeoutError('POST /upload', 2000));
 */
export function requestTimeoutResponse(error: TimeoutError): BlockResponse {
  const problem = problemOf(REQUEST_TIMEOUT, REQUEST_TIMEOUT_DETAIL, error.code, error.resource, undefined);
  return {
    status: REQUEST_TIMEOUT.status,
    headers: Object.freeze({ ...headersOf(problem, false, undefined, undefined), Connection: 'close' }),
    body: problem.body,
    json: problem.json,
  };
}

/** Most cached problem bodies; past it the cache starts afresh (resources are bounded anyway). */
const MAX_CACHED_BODIES = 10_000;
/**
 * A problem body, its JSON and the JSON's length in bytes (as a header value), with what it was
 * made of, and the headers of its last block with what they were made of.
 */
interface Problem {
  readonly body: ProblemDetails;
  readonly json: string;
  readonly length: string;
  readonly code: string;
  readonly policy: string | undefined;
  headers:
    | {
        readonly draft: RateLimitHeadersDraft | false;
        readonly retryAfter: number | undefined;
        readonly quota: number | undefined;
        readonly windowSeconds: number | undefined;
        readonly headers: Readonly<Record<string, string>>;
      }
    | undefined;
}
/**
 * Problem bodies by resource, then by detail, then the few codes and policies met with it. No
 * key is built per request: the strings come as the rule and the error hold them, so the maps
 * hash each once (a concatenated key was hashed anew on every block: 60 % of a 429's cost here).
 */
const bodies = new Map<string, Map<string, Problem[]>>();
let cachedBodies = 0;

/**
 * The problem body of a kind of block on a resource, built and serialised once: under attack
 * most requests are blocked, and `JSON.stringify` would otherwise run on each.
 */
function problemOf(shape: Shape, detail: string, code: string, resource: string, policy: string | undefined): Problem {
  const made = bodies.get(resource)?.get(detail);
  if (made !== undefined) {
    for (let i = 0; i < made.length; i++) if (made[i]!.code === code && made[i]!.policy === policy) return made[i]!;
  }
  const body: ProblemDetails = Object.freeze({
    type: shape.type,
    title: shape.title,
    status: shape.status,
    detail,
    code,
    resource,
    ...(policy === undefined ? {} : { 'violated-policies': Object.freeze([policy]) }),
  });
  const json = JSON.stringify(body);
  const problem: Problem = { body, json, length: String(Buffer.byteLength(json)), code, policy, headers: undefined };
  if (cachedBodies >= MAX_CACHED_BODIES) {
    bodies.clear();
    cachedBodies = 0;
  }
  let byDetail = bodies.get(resource);
  if (byDetail === undefined) bodies.set(resource, (byDetail = new Map<string, Problem[]>()));
  const list = byDetail.get(detail);
  if (list === undefined) byDetail.set(detail, [problem]);
  else list.push(problem);
  cachedBodies++;
  return problem;
}
