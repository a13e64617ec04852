import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The tokens a request may carry to be let in: a bearer token in the `authorization` header,
 * compared in constant time with each of them (never a cookie, so a cross-site request cannot
 * carry one). With no token at all, nobody is let in.
 */
export class BearerTokens {
  private readonly digests: readonly Buffer[];

  constructor(tokens: readonly (string | undefined)[]) {
    this.digests = tokens.filter((token): token is string => token !== undefined).map(digest);
  }

  /** Whether any token is configured. */
  get any(): boolean {
    return this.digests.length > 0;
  }

  /** Whether `req` carries one of the tokens (`authorization: Bearer <token>`). */
  admits(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer (.+)$/i.exec(header.trim()) : null;
    if (match === null) return false;
    const given = digest(match[1]!);
    let admitted = false;
    // Every digest is compared, so the time says nothing about which token matched.
    for (const known of this.digests) admitted = timingSafeEqual(given, known) || admitted;
    return admitted;
  }
}

/** Equal-length digests, so the comparison takes the same time whatever the token's length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
