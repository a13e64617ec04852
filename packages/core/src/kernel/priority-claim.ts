import { isPriority, priorityIndex, type Priority } from './priority';
import { show } from './rule-reader';

/**
 * How an adapter reads a call's priority from outside the engine, shared by the HTTP adapters
 * (a header) and gRPC (a metadata key), so both read a claim alike.
 *
 * A caller's claim is not trusted: the values sent under one name (an HTTP header's lines, a gRPC
 * metadata key's values) name a priority only when there is exactly one, a string that is
 * `critical`, `default` or `sheddable` in any letter case, blanks around it ignored. Anything
 * else (no value, two values, an unknown word, bytes) is `'default'`. No claim rises above `max`:
 * a higher one is lowered to it, so a client can lower its own priority (a batch job marking
 * itself sheddable) but never raise it past what the service allows.
 */
export function claimedPriority(values: readonly unknown[] | undefined, max: Priority): Priority {
  if (values === undefined || values.length !== 1) return 'default';
  const value = values[0];
  if (typeof value !== 'string') return 'default';
  const claimed = value.trim().toLowerCase();
  if (!isPriority(claimed)) return 'default';
  // Index 0 is the most important: a claim above the cap is lowered to it.
  return priorityIndex(claimed) < priorityIndex(max) ? max : claimed;
}

/**
 * The answer of an application's own priority function, trusted: `undefined` is `'default'`; a
 * value that is not a priority is a bug of the function, and fails the call it was asked about.
 * @throws TypeError when `answer` is neither a priority nor `undefined`.
 */
export function givenPriority(answer: unknown): Priority {
  if (answer === undefined) return 'default';
  if (!isPriority(answer))
    throw new TypeError(
      `Floodgate's priority option must return 'critical', 'default', 'sheddable' or undefined, got ${show(answer)}`,
    );
  return answer;
}
