import { isPriority, PRIORITIES, type Priority } from '../kernel/priority';
import { claimedPriority, givenPriority } from '../kernel/priority-claim';
import { join as at, show, type RuleReader } from '../kernel/rule-reader';
import type { NodeRequestLike } from './request-keys';

/**
 * A request's priority read from a header the client sends (`{ header: 'x-priority' }`). The
 * client is not trusted: a value other than `critical`, `default` or `sheddable` (in any letter
 * case), a missing header, or the header sent more than once, count as `'default'`; and no header
 * raises a request above `max`, so by default a client can lower its own priority (a batch job
 * marking itself sheddable) but never claim `'critical'`.
 */
export interface HttpPriorityHeaderOptions {
  /** The header's name, in any letter case. */
  readonly header: string;
  /**
   * The highest priority the header may claim; a higher one is lowered to it. Raise it to
   * `'critical'` only where every client that can reach the service is trusted (behind a gateway
   * that sets or strips the header).
   * @defaultValue 'default'
   */
  readonly max?: Priority;
}

/** How the HTTP layer reads a request's priority, resolved: `'default'` for every request when no option was given. */
export type RequestPriority<Req> = (req: Req, node: NodeRequestLike | undefined) => Priority;

/** Every request is `'default'`. */
const DEFAULT_PRIORITY: RequestPriority<unknown> = () => 'default';

/**
 * Reads the `priority` option of the HTTP adapters: a function of the request (trusted: the
 * application decides, from authentication or the route), or a header (not trusted, capped by
 * `max`). Problems go to `reader`, naming the field.
 */
export function readPriorityOption<Req>(
  obj: Record<string, unknown>,
  path: string,
  reader: RuleReader,
): RequestPriority<Req> {
  const value = obj.priority;
  const field = at(path, 'priority');
  if (value === undefined) return DEFAULT_PRIORITY;
  if (typeof value === 'function') return fromFunction(value as (req: Req) => Priority | undefined);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    reader.fail(field, `must be a function of the request or { header, max }, got ${show(value)}`);
    return DEFAULT_PRIORITY;
  }
  const options = value as Record<string, unknown>;
  reader.knownKeys(options, ['header', 'max'], field);
  const header = options.header;
  if (typeof header !== 'string' || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(header)) {
    reader.fail(at(field, 'header'), `must be a header name, got ${show(header)}`);
    return DEFAULT_PRIORITY;
  }
  const max = options.max ?? 'default';
  if (!isPriority(max)) {
    reader.fail(at(field, 'max'), `must be one of ${PRIORITIES.join(', ')}, got ${show(max)}`);
    return DEFAULT_PRIORITY;
  }
  return fromHeader(header.toLowerCase(), max);
}

function fromFunction<Req>(fn: (req: Req) => Priority | undefined): RequestPriority<Req> {
  return (req) => givenPriority(fn(req));
}

function fromHeader(name: string, max: Priority): RequestPriority<unknown> {
  return (_req, node) => claimedPriority(node?.headersDistinct?.[name], max);
}
