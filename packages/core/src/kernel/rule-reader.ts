import { RuleValidationError, type RuleIssue } from './errors';

/**
 * The longest resource name, in UTF-16 code units. With `maxResources` it bounds what resource
 * names can cost (6000 × 1 KiB by default): a name is a route template or a method's name,
 * never data.
 */
export const MAX_RESOURCE_NAME_LENGTH = 1024;

/**
 * The longest duration any rule or option field may give, in ms: the longest delay a timer
 * honours (2^31 − 1 ms, about 24.8 days), so that no wait derived from a rule can overflow one.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * The greatest threshold of a rule that counts calls (a flow rule's, a system rule's `maxQps`,
 * a hotspot bucket's): 2^53 − 1. Counts beyond it are not exact in a double (2^53 + 1 is 2^53),
 * so a greater threshold could admit more calls than it says.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** The most characters of a value shown in a message; the rest is cut, saying how much. */
const SHOWN_CHARS = 60;

/**
 * Shows a value in an error message: strings quoted, objects and arrays as JSON, the rest as
 * is; anything longer than 60 characters is cut, saying how much was cut.
 */
export function show(value: unknown): string {
  switch (typeof value) {
    case 'string':
      // Cut before quoting: a 10 MB value is never copied whole into a message.
      return value.length <= SHOWN_CHARS
        ? JSON.stringify(value)
        : `${JSON.stringify(value.slice(0, SHOWN_CHARS))}… (${cutNote(value.length)})`;
    case 'function':
      return 'a function';
    case 'symbol':
      return cut(value.toString());
    case 'bigint':
      return cut(`${value}n`);
    case 'object': {
      if (value === null) return 'null';
      const what = Array.isArray(value) ? 'an array' : 'an object';
      try {
        const json = JSON.stringify(value);
        return json === undefined ? what : `${what} ${cut(json)}`;
      } catch {
        return what;
      }
    }
    default:
      return String(value);
  }
}

function cut(text: string): string {
  return text.length <= SHOWN_CHARS ? text : `${text.slice(0, SHOWN_CHARS)}… (${cutNote(text.length)})`;
}

function cutNote(length: number): string {
  return `${length} characters, ${length - SHOWN_CHARS} cut`;
}

/** Bounds for {@link RuleReader.number}. */
export interface NumberBounds {
  /** Least allowed value (inclusive). */
  readonly min?: number;
  /** Least allowed value (exclusive). */
  readonly above?: number;
  /** Greatest allowed value (inclusive). */
  readonly max?: number;
  /** Whether the value must be an integer. */
  readonly integer?: boolean;
}

/**
 * Reads the fields of one rule or options object, collecting every problem instead of
 * stopping at the first. Each read returns a usable value (the default when the field is bad),
 * so validation can go on; the caller throws when {@link RuleReader.issues} is not empty.
 */
export class RuleReader {
  /** The problems found so far. */
  readonly issues: RuleIssue[] = [];

  /** Records a problem at `path`. */
  fail(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  /** Throws a {@link RuleValidationError} listing every problem, if there is any. */
  throwIfAny(context?: string): void {
    if (this.issues.length > 0) throw new RuleValidationError(this.issues, context);
  }

  /** `value` as a plain object, or `undefined` (with a problem recorded) when it is not one. */
  object(value: unknown, path: string): Record<string, unknown> | undefined {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    this.fail(path, `must be an object, got ${show(value)}`);
    return undefined;
  }

  /** `value` as an array, or `[]` (with a problem recorded) when it is not one. */
  array(value: unknown, path: string): readonly unknown[] {
    if (Array.isArray(value)) return value;
    this.fail(path, `must be an array, got ${show(value)}`);
    return [];
  }

  /** Records a problem for each key of `obj` that is not in `known`. */
  knownKeys(obj: Record<string, unknown>, known: readonly string[], path: string): void {
    for (const key of Object.keys(obj)) {
      if (!known.includes(key)) this.fail(join(path, key), `unknown field (allowed: ${known.join(', ')})`);
    }
  }

  /**
   * A required resource name: a non-empty string of at most {@link MAX_RESOURCE_NAME_LENGTH}
   * characters.
   */
  resource(obj: Record<string, unknown>, key: string, path: string): string {
    const value = this.string(obj, key, path);
    if (value.length > MAX_RESOURCE_NAME_LENGTH) {
      this.fail(join(path, key), `must be at most ${MAX_RESOURCE_NAME_LENGTH} characters, got ${show(value)}`);
    }
    return value;
  }

  /** A required non-empty string. */
  string(obj: Record<string, unknown>, key: string, path: string): string;
  /** An optional non-empty string, `fallback` when absent. */
  string<D>(obj: Record<string, unknown>, key: string, path: string, fallback: D): string | D;
  string(obj: Record<string, unknown>, key: string, path: string, ...fallback: unknown[]): unknown {
    const value = obj[key];
    if (value === undefined && fallback.length > 0) return fallback[0];
    if (typeof value === 'string' && value.length > 0) return value;
    this.fail(
      join(path, key),
      value === undefined ? 'is required (a non-empty string)' : `must be a non-empty string, got ${show(value)}`,
    );
    return fallback.length > 0 ? fallback[0] : '';
  }

  /** A required number within `bounds`. */
  number(obj: Record<string, unknown>, key: string, path: string, bounds: NumberBounds): number;
  /** An optional number within `bounds`, `fallback` when absent. */
  number<D>(obj: Record<string, unknown>, key: string, path: string, bounds: NumberBounds, fallback: D): number | D;
  number(
    obj: Record<string, unknown>,
    key: string,
    path: string,
    bounds: NumberBounds,
    ...fallback: unknown[]
  ): unknown {
    const value = obj[key];
    if (value === undefined && fallback.length > 0) return fallback[0];
    const problem = numberProblem(value, bounds);
    if (problem === undefined) return value;
    this.fail(join(path, key), value === undefined ? `is required (${describeBounds(bounds)})` : problem);
    return fallback.length > 0 ? fallback[0] : 0;
  }

  /**
   * Records a problem when `value`, a threshold that counts calls (read at `path`), is above
   * {@link MAX_COUNT}, where counting stops being exact.
   */
  countLimit(value: number, path: string): void {
    if (value > MAX_COUNT)
      this.fail(path, `must be at most ${MAX_COUNT} (2^53 − 1, where counts stay exact), got ${show(value)}`);
  }

  /** One of `choices`; `fallback` when absent (required when no fallback is given). */
  oneOf<T extends string>(
    obj: Record<string, unknown>,
    key: string,
    path: string,
    choices: readonly T[],
    fallback?: T,
  ): T {
    const value = obj[key];
    if (value === undefined && fallback !== undefined) return fallback;
    if ((choices as readonly unknown[]).includes(value)) return value as T;
    const allowed = choices.map((c) => `'${c}'`).join(', ');
    this.fail(
      join(path, key),
      value === undefined ? `is required (one of ${allowed})` : `must be one of ${allowed}, got ${show(value)}`,
    );
    return fallback ?? choices[0]!;
  }

  /** A boolean, `fallback` when absent. */
  boolean(obj: Record<string, unknown>, key: string, path: string, fallback: boolean): boolean {
    const value = obj[key];
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    this.fail(join(path, key), `must be true or false, got ${show(value)}`);
    return fallback;
  }
}

/** `path.key`, or `key` when the path is empty. */
export function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Why `value` breaks `bounds`, or `undefined` when it does not. */
export function numberProblem(value: unknown, bounds: NumberBounds): string | undefined {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!bounds.integer || Number.isSafeInteger(value)) &&
    (bounds.min === undefined || value >= bounds.min) &&
    (bounds.above === undefined || value > bounds.above) &&
    (bounds.max === undefined || value <= bounds.max);
  return ok ? undefined : `must be ${describeBounds(bounds)}, got ${show(value)}`;
}

function describeBounds(bounds: NumberBounds): string {
  const kind = bounds.integer ? 'a safe integer' : 'a finite number';
  const lower =
    bounds.min !== undefined ? `>= ${bounds.min}` : bounds.above !== undefined ? `> ${bounds.above}` : undefined;
  if (bounds.min !== undefined && bounds.max !== undefined) return `${kind} within [${bounds.min}, ${bounds.max}]`;
  if (lower !== undefined && bounds.max !== undefined) return `${kind} ${lower} and <= ${bounds.max}`;
  if (lower !== undefined) return `${kind} ${lower}`;
  if (bounds.max !== undefined) return `${kind} <= ${bounds.max}`;
  return kind;
}
