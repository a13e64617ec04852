import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  normalizeRuleSet,
  RuleValidationError,
  type Floodgate,
  type RuleIssue,
  type RuleSetOptions,
} from '@floodgate/core';

/**
 * A durable place for rules, written through by the dashboard's edits so that every instance
 * and every restart gets them: `fileRuleSource()` from `@floodgate/core`, or your own (for
 * Redis: `{ name: 'redis', write: (rules) => publishRules(redis, target, rules) }` with
 * `publishRules` from `@floodgate/redis`, every instance following it with `redisRuleSource`).
 */
export interface RuleStore {
  /** How the page names the store (`'file'`, `'redis'`). */
  readonly name: string;
  /**
   * Stores a whole rule set (every kind present). The rules reach the engine through the
   * source that follows the store, not through the dashboard.
   */
  write(rules: RuleSetOptions): Promise<void> | void;
}

/** An HTTP answer of the editor. */
export interface EditAnswer {
  readonly status: number;
  readonly body: { readonly message: string; readonly issues?: readonly RuleIssue[]; readonly via?: string };
  readonly headers?: Readonly<Record<string, string>>;
}

/** The body could not be read within the limit; says how to answer. */
class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Rule edits from the page: checks the token (a bearer token in the `authorization` header,
 * compared in constant time; never a cookie, so a cross-site request cannot carry it), reads
 * the JSON body within a size limit, validates it with the engine's own validation, and
 * applies it whole, through `loadRules` with source `'dashboard'` or through the durable
 * store. Every kind the body leaves out is emptied: the body is the whole loaded layer.
 */
export class RuleEditor {
  private readonly tokenDigest: Buffer | undefined;

  constructor(
    private readonly fg: Floodgate,
    token: string | undefined,
    private readonly store: RuleStore | undefined,
    private readonly maxBodyBytes: number,
  ) {
    this.tokenDigest = token === undefined ? undefined : digest(token);
  }

  /** Whether edits are possible at all (a token is configured). */
  get readOnly(): boolean {
    return this.tokenDigest === undefined;
  }

  /** Where edits go: the store's name, or `'engine'` (this instance only, until restart). */
  get target(): string {
    return this.store?.name ?? 'engine';
  }

  /** Handles one edit request; never throws. */
  async edit(req: IncomingMessage, parsedBody: unknown): Promise<EditAnswer> {
    const refused = this.refuse(req);
    if (refused !== undefined) {
      req.resume();
      return refused;
    }
    let body: unknown;
    try {
      body = parsedBody !== undefined ? parsedBody : JSON.parse(await readBody(req, this.maxBodyBytes));
    } catch (error) {
      if (error instanceof BodyError) return { status: error.status, body: { message: error.message } };
      return {
        status: 400,
        body: {
          message: 'The body is not valid JSON',
          issues: [{ path: '', message: `is not valid JSON (${(error as Error).message})` }],
        },
      };
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return {
        status: 422,
        body: {
          message: 'Rules rejected',
          issues: [{ path: 'rules', message: 'must be an object of rule lists by kind' }],
        },
      };
    }
    const rules: Record<string, unknown> = {};
    for (const kind of Object.keys(this.fg.getRules())) rules[kind] = [];
    Object.assign(rules, body);
    return this.apply(rules);
  }

  private async apply(rules: RuleSetOptions): Promise<EditAnswer> {
    try {
      if (this.store === undefined) {
        this.fg.loadRules(rules, { source: 'dashboard' });
      } else {
        normalizeRuleSet(rules);
        await this.store.write(rules);
      }
    } catch (error) {
      if (error instanceof RuleValidationError)
        return { status: 422, body: { message: 'Rules rejected; nothing was applied', issues: error.issues } };
      return {
        status: 502,
        body: { message: `The rule store "${this.target}" could not write the rules: ${String(error)}` },
      };
    }
    return { status: 200, body: { message: `Rules applied through ${this.target}`, via: this.target } };
  }

  /** The answer for a request that may not edit, or `undefined` when it may. */
  private refuse(req: IncomingMessage): EditAnswer | undefined {
    if (this.tokenDigest === undefined)
      return { status: 403, body: { message: 'The dashboard is read-only: no token is configured' } };
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer (.+)$/i.exec(header.trim()) : null;
    if (match === null || !timingSafeEqual(digest(match[1]!), this.tokenDigest)) {
      return {
        status: 401,
        body: { message: 'A valid token is required to edit rules (authorization: Bearer <token>)' },
        headers: { 'www-authenticate': 'Bearer' },
      };
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json(\s*;|$)/i.test(type))
      return { status: 415, body: { message: `Rules must be sent as application/json, got ${JSON.stringify(type)}` } };
    return undefined;
  }
}

/** Equal-length digests, so the comparison takes the same time whatever the token's length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Reads a request body as UTF-8, refusing more than `limit` bytes (declared or sent). */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    return Promise.reject(new BodyError(413, `The body is larger than ${limit} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyError(413, `The body is larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
