/**
 * The key a parameter value is counted under: the string form of a string, number, bigint or
 * boolean (so `42`, `42n` and `'42'` are one value, and JSON-loaded `specificItems` match
 * numeric arguments); `undefined` for any other type, which hotspot rules do not limit.
 *
 * Objects, symbols and functions are left alone on purpose: their identity does not repeat
 * across requests (each request parses a new object), so counting them would only fill the
 * LRU, and their string forms (`[object Object]`) would lump unrelated values together.
 */
export function hotParamKey(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      return undefined;
  }
}
