import type { IncomingMessage } from 'node:http';
import {
  normalizeRuleSet,
  parseRulesJson,
  RuleValidationError,
  type Floodgate,
  type RuleIssue,
  type RuleSetOptions,
} from '@floodgate/core';
import type { RuleKindKey } from '@floodgate/core/metrics';
import { BearerTokens } from './bearer-tokens';

/** The `source` that the dashboard's edits are loaded and refused with. */
const SOURCE = 'dashboard';

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
 * Rule edits from the page: checks the token (see {@link BearerTokens}), reads the JSON body
 * within a size limit, validates it with the engine's own validation, and applies it whole,
 * through `loadRules` with source `'dashboard'` or through the durable store. Every kind the body
 * leaves out is emptied: the body is the whole loaded layer.
 */
export class RuleEditor {
  private readonly tokens: BearerTokens;

  constructor(
    private readonly fg: Floodgate,
    token: string | undefined,
    private readonly store: RuleStore | undefined,
    private readonly maxBodyBytes: number,
  ) {
    this.tokens = new BearerTokens([token]);
  }

  /** Whether edits are possible at all (a token is configured). */
  get readOnly(): boolean {
    return !this.tokens.any;
  }

  /** Where edits go: the store's name, or `'engine'` (this instance only, until restart). */
  get target(): string {
    return this.store?.name ?? 'engine';
  }

  /**
   * Handles one edit request that {@link RuleEditor.refuse} let in; never throws. The body is
   * judged as it was sent, before anything is merged into it: not JSON (400), over the limit
   * (413), or not a valid rule set (422: `null`, an array, a primitive, an unknown kind, a
   * `__proto__` key anywhere, a bad rule) is refused, announced as `rulesRejected` with source
   * `'dashboard'`, and the rules in force stay.
   */
  async edit(req: IncomingMessage, parsedBody: unknown): Promise<EditAnswer> {
    let body: unknown;
    try {
      body =
        parsedBody !== undefined
          ? withinLimit(parsedBody, this.maxBodyBytes)
          : parseRulesJson(await readBody(req, this.maxBodyBytes), 'Rules rejected');
    } catch (error) {
      if (error instanceof BodyError) return { status: error.status, body: { message: error.message } };
      if (!(error instanceof RuleValidationError))
        return { status: 400, body: { message: `The body could not be read: ${String(error)}` } };
      this.fg.reportRejectedRules(error, { source: SOURCE });
      return { status: 400, body: { message: 'The body is not valid JSON', issues: error.issues } };
    }
    return this.apply(body);
  }

  /** Applies a body whole (the kinds it lacks are emptied), or refuses it whole. */
  private async apply(body: unknown): Promise<EditAnswer> {
    const kinds = Object.keys(this.fg.getRules()) as RuleKindKey[];
    if (this.store === undefined) {
      try {
        this.fg.loadRules(body as RuleSetOptions, { source: SOURCE, replaces: kinds });
      } catch (error) {
        return rejected(error as RuleValidationError);
      }
      return applied(this.target);
    }
    try {
      normalizeRuleSet(body);
    } catch (error) {
      this.fg.reportRejectedRules(error as RuleValidationError, { source: SOURCE });
      return rejected(error as RuleValidationError);
    }
    // Validated: an object of known kinds, with no prototype key anywhere.
    const rules: Record<string, unknown> = {};
    for (const kind of kinds) rules[kind] = (body as Record<string, unknown>)[kind] ?? [];
    try {
      await this.store.write(rules);
    } catch (error) {
      if (error instanceof RuleValidationError) return rejected(error);
      return {
        status: 502,
        body: { message: `The rule store "${this.target}" could not write the rules: ${String(error)}` },
      };
    }
    return applied(this.target);
  }

  /** The answer for a request that may not edit, or `undefined` when it may. */
  refuse(req: IncomingMessage): EditAnswer | undefined {
    if (this.readOnly) return { status: 403, body: { message: 'The dashboard is read-only: no token is configured' } };
    if (!this.tokens.admits(req)) {
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

function rejected(error: RuleValidationError): EditAnswer {
  return { status: 422, body: { message: 'Rules rejected; nothing was applied', issues: error.issues } };
}

function applied(target: string): EditAnswer {
  return { status: 200, body: { message: `Rules applied through ${target}`, via: target } };
}

/**
 * A body that a body parser (express.json(), koa-bodyparser) read before the dashboard could:
 * the parser's own limit bounded the reading, so the dashboard's limit is applied to what it
 * produced, as JSON text (about the size of the body sent, without its whitespace).
 */
function withinLimit(parsed: unknown, limit: number): unknown {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(parsed) ?? '', 'utf8');
  } catch {
    throw new BodyError(400, 'The parsed body cannot be read as JSON');
  }
  if (size > limit) throw new BodyError(413, `The body is larger than ${limit} bytes (as parsed, written as JSON)`);
  return parsed;
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
