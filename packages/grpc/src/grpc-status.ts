import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { isBlockError, type BlockError } from '@floodgate/core';
import type { Refusal } from '@floodgate/core/http';

/** The trailing metadata key of gRFC A6's server pushback: how many ms the client should wait before calling again. */
export const PUSHBACK_METADATA_KEY = 'grpc-retry-pushback-ms';

/**
 * How each kind of refusal is answered in gRPC: a used-up quota (flow and hotspot rules) is
 * `RESOURCE_EXHAUSTED`; reduced capacity (an open breaker, system protection, an adaptive limit)
 * is `UNAVAILABLE`, as Envoy answers overload; authority is `PERMISSION_DENIED`.
 */
const CODES: { readonly [R in Refusal]: Status } = Object.freeze({
  quota: Status.RESOURCE_EXHAUSTED,
  capacity: Status.UNAVAILABLE,
  forbidden: Status.PERMISSION_DENIED,
});

/** A blocked call's status: the code, the details and the trailing metadata, with the block error as its `cause`. */
export interface BlockStatus extends StatusObject {
  /**
   * The block error. Client calls answered locally carry it to the caller: grpc-js copies the
   * status's fields onto the `ServiceError` it gives the callback or the stream's `error` event,
   * so `err.cause` is the block error there (read it with {@link blockErrorOf}).
   */
  readonly cause: BlockError;
}

/**
 * The gRPC status of a block, shared by the server and client interceptors so both answer
 * alike: the code of its refusal (see {@link grpcCodeOf}), details naming the kind of rule by its
 * stable error code and saying what happened in a fixed sentence (never a threshold, a value or
 * the caller's data: `'The request rate limit of this resource was exceeded. (ERR_FLOW_BLOCKED)'`),
 * and `grpc-retry-pushback-ms` in the trailing metadata where the wait is known (whole ms,
 * rounded up), so a client knows when to call again (gRFC A6).
 *
 * @example
 * call.sendStatus(blockStatus(error)); // in a server interceptor
 */
export function blockStatus(error: BlockError): BlockStatus {
  const metadata = new Metadata();
  const wait = error.retryAfterMs;
  if (wait !== undefined && Number.isFinite(wait))
    metadata.set(PUSHBACK_METADATA_KEY, String(Math.max(0, Math.ceil(wait))));
  return { code: grpcCodeOf(error), details: `${error.detail} (${error.code})`, metadata, cause: error };
}

/**
 * The gRPC status code of a block: `RESOURCE_EXHAUSTED` for a used-up quota (flow and hotspot
 * rules), `UNAVAILABLE` for reduced capacity (an open breaker, system protection, an adaptive
 * limit), `PERMISSION_DENIED` for authority rules.
 */
export function grpcCodeOf(error: BlockError): Status {
  return CODES[error.refusal];
}

/**
 * The server's pushback in a status's trailing metadata, in ms: its first
 * `grpc-retry-pushback-ms` value when that is a decimal integer (gRFC A6), else `undefined`
 * (absent, negative, or not a number: no pushback is honoured).
 */
export function pushbackOf(metadata: Metadata | undefined): number | undefined {
  const value = metadata?.get(PUSHBACK_METADATA_KEY)[0];
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * The block error behind a gRPC error, if a Floodgate client interceptor answered the call
 * locally (a client-side rule refused it, or the server's pushback has not passed): the
 * `ServiceError`'s `cause`. `undefined` for every other error, a server's block among them (the
 * server's answer is its status: `err.code`, `err.details` and `err.metadata`).
 *
 * @example
 * client.getUser(request, (err, reply) => {
 *   const block = blockErrorOf(err);
 *   if (block !== undefined) retryIn(block.retryAfterMs);
 * });
 */
export function blockErrorOf(error: unknown): BlockError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const cause = (error as { readonly cause?: unknown }).cause;
  return isBlockError(cause) ? cause : undefined;
}
