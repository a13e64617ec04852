import type { Metadata } from '@grpc/grpc-js';

const METADATA_PREFIX = 'metadata:';
const MESSAGE_PREFIX = 'message:';
const METADATA_KEY = /^[0-9a-z_.-]{1,256}$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,15}$/;
const NO_READERS: readonly Reader[] = Object.freeze([]);

/** Reads one hotspot value of a call. */
interface Reader {
  readonly key: string;
  /** The metadata key read, or `undefined` for a message field. */
  readonly metadata: string | undefined;
  /** The message field read, as its path. */
  readonly path: readonly string[];
}

/**
 * Whether `key` names a value of a gRPC call a hotspot rule can count: `'metadata:<key>'` (a
 * metadata key, not a `-bin` one: binary values are no key) or `'message:<field>'` (a field of
 * the request message, dotted for nested fields, at most 16 deep).
 */
export function isParamSource(key: unknown): key is string {
  if (typeof key !== 'string') return false;
  if (key.startsWith(METADATA_PREFIX)) {
    const name = key.slice(METADATA_PREFIX.length).toLowerCase();
    return METADATA_KEY.test(name) && !name.endsWith('-bin');
  }
  return key.startsWith(MESSAGE_PREFIX) && FIELD_PATH.test(key.slice(MESSAGE_PREFIX.length));
}

/**
 * The hotspot values a method's rules read (`ResourceInfo.paramKeys`), read from each call: the
 * first value of a metadata key, or a field of the request message. A key of another form reads
 * nothing (a rule on it limits no call). Built once per change of the rules in force.
 */
export class CallParams {
  /** Reads nothing: a method whose rules read no value. */
  static readonly NONE = new CallParams([]);
  /** Whether some value comes from the request message (the call is then entered at its first message). */
  readonly readsMessage: boolean;
  private readonly readers: readonly Reader[];

  constructor(keys: readonly string[]) {
    const readers = keys.filter(isParamSource).map((key): Reader => {
      const isMetadata = key.startsWith(METADATA_PREFIX);
      return {
        key,
        metadata: isMetadata ? key.slice(METADATA_PREFIX.length).toLowerCase() : undefined,
        path: isMetadata ? [] : key.slice(MESSAGE_PREFIX.length).split('.'),
      };
    });
    this.readers = readers.length === 0 ? NO_READERS : readers;
    this.readsMessage = readers.some((reader) => reader.metadata === undefined);
  }

  /** The values of a call, by key; `undefined` when the rules read none. Allocates only then. */
  read(metadata: Metadata, message: unknown): Record<string, unknown> | undefined {
    const readers = this.readers;
    if (readers.length === 0) return undefined;
    const params: Record<string, unknown> = {};
    for (let i = 0; i < readers.length; i++) {
      const reader = readers[i]!;
      const value = reader.metadata !== undefined ? metadata.get(reader.metadata)[0] : fieldOf(message, reader.path);
      if (isScalar(value)) params[reader.key] = value;
    }
    return params;
  }
}

/** The field at `path` of a message (own properties only: never one of `Object.prototype`). */
function fieldOf(message: unknown, path: readonly string[]): unknown {
  let value = message;
  for (let i = 0; i < path.length; i++) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, path[i]!)) return undefined;
    value = (value as Record<string, unknown>)[path[i]!];
  }
  return value;
}

/**
 * Whether a value is counted: a string, number, boolean or bigint. Anything else (a `-bin`
 * value, bytes, a repeated field, a message) is no value: an array would be counted element by
 * element, so a client could make one call cost a million checks.
 */
function isScalar(value: unknown): boolean {
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint';
}
