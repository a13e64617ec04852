import type { IncomingMessage } from 'node:http';
import { type RuleValidationError } from '@floodgate/core';
import { parseRulesJson } from '@floodgate/core/rules';

/** A JSON body, read within a limit and parsed, not yet judged as rules. */
export type JsonBody =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly status: number;
      readonly message: string;
      /** Why the text is not JSON, as the engine's rule sources report it. */
      readonly invalid?: RuleValidationError;
    };

/**
 * The JSON body of an edit: the one a body parser (express.json(), koa-bodyparser) already read,
 * its JSON text held to `limit` bytes, or else the request's own body, read as UTF-8 within `limit`
 * bytes (declared or sent) and parsed with the engine's `parseRulesJson`. Never throws: a body
 * over the limit is 413, one that is not JSON 400 (with the parse error as an issue at path `''`).
 */
export async function readJsonBody(req: IncomingMessage, parsed: unknown, limit: number): Promise<JsonBody> {
  if (parsed !== undefined) return withinLimit(parsed, limit);
  let text: string;
  try {
    text = await readText(req, limit);
  } catch (error) {
    if (error instanceof BodyError) return { ok: false, status: error.status, message: error.message };
    return { ok: false, status: 400, message: `The body could not be read: ${String(error)}` };
  }
  try {
    return { ok: true, value: parseRulesJson(text, 'Rules rejected') };
  } catch (error) {
    return { ok: false, status: 400, message: 'The body is not valid JSON', invalid: error as RuleValidationError };
  }
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
 * A body that a body parser read before the dashboard could: the parser's own limit bounded the
 * reading, so the dashboard's limit is applied to what it produced, as JSON text (about the size
 * of the body sent, without its whitespace).
 */
function withinLimit(parsed: unknown, limit: number): JsonBody {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(parsed) ?? '', 'utf8');
  } catch {
    return { ok: false, status: 400, message: 'The parsed body cannot be read as JSON' };
  }
  if (size > limit)
    return { ok: false, status: 413, message: `The body is larger than ${limit} bytes (as parsed, written as JSON)` };
  return { ok: true, value: parsed };
}

/** Reads a request body as UTF-8, refusing more than `limit` bytes (declared or sent). */
function readText(req: IncomingMessage, limit: number): Promise<string> {
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
