/** Defaults of the HTTP adapters' options (`resilience()`, the per-route factories, the Fastify plugin). */
export const HTTP_DEFAULTS = Object.freeze({
  /**
   * The form of the IETF `RateLimit-Policy` / `RateLimit` headers sent on blocked responses to
   * QPS rules: draft-8 (named policies), as express-rate-limit's `'draft-8'`.
   */
  headers: 'draft-8',
  /** The least response status the default `isFailure` counts as a failure for circuit breakers. */
  failureStatus: 500,
  /** The media type of block response bodies (RFC 9457 problem details). */
  contentType: 'application/problem+json; charset=utf-8',
} as const);
