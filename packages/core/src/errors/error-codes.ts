/**
 * Every error code Floodgate throws, with what it means. Codes are stable: a retired code is
 * never reused.
 */
export const ErrorCodes = Object.freeze({
  /** A flow rule (QPS or concurrency) refused the call. */
  ERR_FLOW_BLOCKED: 'A flow rule (QPS or concurrency limit) blocked the call.',
  /** A hotspot rule refused the call for one parameter value. */
  ERR_HOT_PARAM_BLOCKED: 'A hotspot parameter rule blocked the call for one parameter value.',
  /** A circuit breaker is open (or half-open with its probes taken). */
  ERR_CIRCUIT_OPEN: 'A circuit breaker on the resource is open.',
  /** System protection refused the call. */
  ERR_SYSTEM_BLOCKED: 'System protection blocked the call.',
  /** An authority rule refused the caller's origin. */
  ERR_AUTHORITY_BLOCKED: "An authority rule refused the caller's origin.",
  /** A rule set, rule or option failed validation. */
  ERR_INVALID_RULE: 'A rule or option failed validation; nothing was changed.',
});

/** One of Floodgate's stable error codes. */
export type ErrorCode = keyof typeof ErrorCodes;
