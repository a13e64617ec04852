import type { IncomingMessage } from 'node:http';
import { RuleValidationError, type Floodgate, type RuleIssue } from '@floodgate/core';
import { normalizeRuleSet, type RuleSet, type RuleSetOptions } from '@floodgate/core/rules';
import { BearerTokens } from './bearer-tokens';
import { readJsonBody } from './json-body';
import { LoadedLayer, type LayerView } from './loaded-layer';

/** The `source` that the dashboard's edits are loaded and refused with. */
const SOURCE = 'dashboard';

/**
 * A durable place for rules, written through by the dashboard's edits so that every instance
 * and every restart gets them: `fileRuleSource()` from `@floodgate/core/rules`, or your own (for
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

/** A problem of an edit: a rule issue, and where it is in the rule edited, when it is in that rule. */
export interface EditIssue extends RuleIssue {
  /**
   * The path inside the rule edited (`threshold`, `key.name`, `patterns[1]`; `''` for the rule
   * itself), for the form to show the problem next to its field; absent for a problem elsewhere.
   */
  readonly field?: string;
}

/** An HTTP answer of the editor. */
export interface EditAnswer {
  readonly status: number;
  readonly body: {
    readonly message: string;
    readonly issues?: readonly EditIssue[];
    /** Where the edit went: the store's name, or `'engine'`. */
    readonly via?: string;
    /** The version of the loaded layer: after the edit (200), or now (409). */
    readonly version?: string;
    /** The kind and position of the rule added or replaced (200). */
    readonly kind?: string;
    readonly index?: number;
  };
  readonly headers?: Readonly<Record<string, string>>;
}

/** One rule edit: add a rule to a kind, replace or delete the one at a position, on a version of the layer. */
export interface RuleChange {
  readonly op: 'add' | 'replace' | 'delete';
  /** The kind's key in a rule set (`flow`, `hotParams`, ...). */
  readonly kind: string;
  /** The rule's position among the kind's loaded rules (replace, delete). */
  readonly index?: number;
  /** The version of the layer the edit was made on (`api/rules/loaded`'s ETag). */
  readonly version: string;
}

const DONE: Readonly<Record<RuleChange['op'], string>> = { add: 'added', replace: 'replaced', delete: 'deleted' };

/**
 * Rule edits from the page: the whole loaded layer at once (the JSON editor), or one rule at a
 * time (the forms: add, replace or delete a rule of a kind). It checks the token (see
 * {@link BearerTokens}), reads the JSON body within a size limit, builds the whole layer the edit
 * makes, validates it with the engine's own validation (`normalizeRuleSet`, as every rule source
 * does) and applies it whole, through `loadRules` with source `'dashboard'` or through the
 * durable store. Edits run one at a time, each on the version of the layer it names: one made on
 * a layer that has changed since is refused (409), so concurrent edits never lose each other's
 * changes.
 */
export class RuleEditor {
  private readonly tokens: BearerTokens;
  private readonly layer: LoadedLayer;
  /** The edits, one after the other: each reads the layer and writes it before the next reads it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly fg: Floodgate,
    token: string | undefined,
    private readonly store: RuleStore | undefined,
    private readonly maxBodyBytes: number,
    private readonly storeTimeoutMs: number,
  ) {
    this.tokens = new BearerTokens([token]);
    this.layer = new LoadedLayer(fg);
  }

  /** Whether edits are possible at all (a token is configured). */
  get readOnly(): boolean {
    return !this.tokens.any;
  }

  /** Where edits go: the store's name, or `'engine'` (this instance only, until restart). */
  get target(): string {
    return this.store?.name ?? 'engine';
  }

  /** The loaded layer as edits are made on it, and its version (`api/rules/loaded`). */
  loaded(): LayerView {
    return this.layer.current();
  }

  /**
   * Handles one whole-layer edit that {@link RuleEditor.refuse} let in; never throws. The body is
   * judged as it was sent, before anything is merged into it: not JSON (400), over the limit
   * (413), or not a valid rule set (422: `null`, an array, a primitive, an unknown kind, a
   * `__proto__` key anywhere, a bad rule) is refused, announced as `rulesRejected` with source
   * `'dashboard'`, and the rules in force stay. Every kind the body leaves out is emptied: the
   * body is the whole loaded layer. With `version`, a layer changed since is refused (409).
   */
  async edit(req: IncomingMessage, parsedBody: unknown, version?: string): Promise<EditAnswer> {
    const body = await this.body(req, parsedBody);
    if ('status' in body) return body;
    return this.serially(() => {
      const base = this.layer.current();
      if (version !== undefined && version !== base.version) return stale(version, base.version);
      const edit: Edit = { done: 'Rules applied', single: false };
      return this.store === undefined
        ? this.load(body.value, edit)
        : this.write(body.value as Record<string, unknown>, base, edit);
    });
  }

  /**
   * Handles one rule edit that {@link RuleEditor.refuse} let in; never throws. The body (add,
   * replace) is the rule, judged as sent within the whole layer it makes: problems come back by
   * path, those inside the rule with their `field` (422), and nothing changes. A kind the engine
   * does not have, or a position it has no rule at, is 404; a layer changed since `version` 409.
   */
  async editRule(req: IncomingMessage, parsedBody: unknown, change: RuleChange): Promise<EditAnswer> {
    const kinds = this.layer.kinds;
    if (!kinds.includes(change.kind)) {
      req.resume();
      return {
        status: 404,
        body: { message: `No rule kind ${JSON.stringify(change.kind.slice(0, 64))} (kinds: ${kinds.join(', ')})` },
      };
    }
    let rule: unknown;
    if (change.op !== 'delete') {
      const body = await this.body(req, parsedBody);
      if ('status' in body) return body;
      rule = body.value;
    }
    return this.serially(() => {
      const base = this.layer.current();
      if (change.version !== base.version) return stale(change.version, base.version);
      const layer = JSON.parse(base.json) as Record<string, unknown[]>;
      const list = layer[change.kind]!;
      const index = change.op === 'add' ? list.length : change.index!;
      if (index >= list.length && change.op !== 'add') {
        return {
          status: 404,
          body: {
            message: `No loaded ${change.kind} rule at position ${index} (there are ${list.length})`,
            version: base.version,
          },
        };
      }
      if (change.op === 'delete') list.splice(index, 1);
      else list[index] = rule;
      const edit: Edit = {
        done: `Rule ${DONE[change.op]}`,
        single: true,
        ...(change.op === 'delete' ? {} : { at: { kind: change.kind, index, path: `${change.kind}[${index}]` } }),
      };
      return this.store === undefined ? this.load(layer, edit) : this.write(layer, base, edit);
    });
  }

  /** The answer for a request that may not edit, or `undefined` when it may; `withBody`: it must send JSON. */
  refuse(req: IncomingMessage, withBody = true): EditAnswer | undefined {
    if (this.readOnly) return { status: 403, body: { message: 'The dashboard is read-only: no token is configured' } };
    if (!this.tokens.admits(req)) {
      return {
        status: 401,
        body: { message: 'A valid token is required to edit rules (authorization: Bearer <token>)' },
        headers: { 'www-authenticate': 'Bearer' },
      };
    }
    const type = req.headers['content-type'] ?? '';
    if (withBody && !/^application\/json(\s*;|$)/i.test(type))
      return { status: 415, body: { message: `Rules must be sent as application/json, got ${JSON.stringify(type)}` } };
    return undefined;
  }

  /** Stops following the engine. */
  close(): void {
    this.layer.close();
  }

  /** The body, or the answer when it cannot be read (not JSON is also announced as `rulesRejected`). */
  private async body(req: IncomingMessage, parsedBody: unknown): Promise<{ value: unknown } | EditAnswer> {
    const body = await readJsonBody(req, parsedBody, this.maxBodyBytes);
    if (body.ok) return { value: body.value };
    if (body.invalid !== undefined) this.fg.reportRejectedRules(body.invalid, { source: SOURCE });
    return {
      status: body.status,
      body:
        body.invalid === undefined ? { message: body.message } : { message: body.message, issues: body.invalid.issues },
    };
  }

  /**
   * Writes through the store, giving up waiting after `storeTimeoutMs` (on the engine's clock):
   * whether the write finished in time. A write that fails in time rejects.
   */
  private async writeWithin(rules: Record<string, unknown>): Promise<boolean> {
    const written = Promise.resolve(this.store!.write(rules)).then(() => true);
    const timer = new AbortController();
    const expired = this.fg.clock.sleep(this.storeTimeoutMs, timer.signal).then(
      () => false,
      () => true,
    );
    try {
      return await Promise.race([written, expired]);
    } finally {
      timer.abort();
      written.catch(() => undefined);
    }
  }

  /** Runs `edit` once every edit before it has finished. */
  private serially(edit: () => EditAnswer | Promise<EditAnswer>): Promise<EditAnswer> {
    const run = this.queue.then(edit, edit);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Applies a whole layer to this engine (`loadRules` validates it and announces a refusal). */
  private load(layer: unknown, edit: Edit): EditAnswer {
    try {
      this.fg.loadRules(layer as RuleSetOptions, { source: SOURCE, replaces: this.layer.kinds as (keyof RuleSet)[] });
    } catch (error) {
      return rejected(error, edit);
    }
    return applied(this.target, edit, this.layer.current());
  }

  /**
   * Validates a whole layer as it is (every kind present, or a body as sent), then writes it
   * through the store, every kind present; a refusal is announced as `rulesRejected`.
   */
  private async write(layer: Record<string, unknown>, base: LayerView, edit: Edit): Promise<EditAnswer> {
    let normalized: Partial<RuleSet>;
    try {
      normalized = normalizeRuleSet(layer);
    } catch (error) {
      if (error instanceof RuleValidationError) this.fg.reportRejectedRules(error, { source: SOURCE });
      return rejected(error, edit);
    }
    // Validated: an object of known kinds, with no prototype key anywhere.
    const rules: Record<string, unknown> = {};
    for (const kind of this.layer.kinds) rules[kind] = layer[kind] ?? [];
    try {
      if (!(await this.writeWithin(rules))) {
        return {
          status: 504,
          body: {
            message: `The rule store "${this.target}" did not write the rules within ${this.storeTimeoutMs} ms; the edit may still land`,
          },
        };
      }
    } catch (error) {
      if (error instanceof RuleValidationError) return rejected(error, edit);
      return {
        status: 502,
        body: { message: `The rule store "${this.target}" could not write the rules: ${String(error)}` },
      };
    }
    return applied(this.target, edit, this.layer.wrote(normalized, base.version));
  }
}

/** What an edit did, for its answers: the whole layer, or one rule (with where it is when it stays). */
interface Edit {
  /** `'Rules applied'`, `'Rule added'`, ... */
  readonly done: string;
  /** Whether the edit was of one rule (its answers say "Rule"). */
  readonly single: boolean;
  /** The rule added or replaced: its kind, position, and path in the layer (`flow[3]`). */
  readonly at?: { readonly kind: string; readonly index: number; readonly path: string };
}

/** The 422 of a refused layer, its issues in the rule edited located by `field`. */
function rejected(error: unknown, edit: Edit): EditAnswer {
  if (!(error instanceof RuleValidationError)) throw error;
  const at = edit.at;
  return {
    status: 422,
    body: {
      message: `${edit.single ? 'Rule' : 'Rules'} rejected; nothing was applied`,
      issues: at === undefined ? error.issues : error.issues.map((issue) => locate(issue, at.path)),
    },
  };
}

/** An issue with its `field` when it lies inside the rule at `path` (`flow[3].threshold` → `threshold`). */
function locate(issue: RuleIssue, path: string): EditIssue {
  if (issue.path === path) return { ...issue, field: '' };
  const rest = issue.path.slice(path.length);
  if (!issue.path.startsWith(path) || (rest[0] !== '.' && rest[0] !== '[')) return issue;
  return { ...issue, field: rest[0] === '.' ? rest.slice(1) : rest };
}

function stale(given: string, current: string): EditAnswer {
  return {
    status: 409,
    body: {
      message: `The loaded rules changed since version ${JSON.stringify(given.slice(0, 64))} was read; nothing was applied. Read them again and redo the edit.`,
      version: current,
    },
  };
}

function applied(target: string, edit: Edit, layer: LayerView): EditAnswer {
  const at = edit.at;
  return {
    status: 200,
    body: {
      message: `${edit.done} through ${target}`,
      via: target,
      version: layer.version,
      ...(at === undefined ? {} : { kind: at.kind, index: at.index }),
    },
  };
}
