/** Reads a reply field as a number. @throws TypeError when it is not one. */
export function replyNumber(reply: unknown, index: number): number {
  const value = Number((reply as unknown[])[index]);
  if (!Array.isArray(reply) || Number.isNaN(value))
    throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
  return value;
}
