import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Entry, type Floodgate } from '@floodgate/core';
import { LiveFeed } from './live-feed';
import {
  expressMount,
  fastifyMount,
  koaMount,
  type DashboardHandler,
  type ExpressMiddleware,
  type FastifyPluginLike,
  type HandleOptions,
  type KoaMiddleware,
} from './mounts';
import { BearerTokens } from './bearer-tokens';
import { DASHBOARD_RESOURCES, OwnLimits } from './own-limits';
import { RuleEditor, type RuleChange, type RuleStore } from './rule-editor';
import { ruleForms } from './rule-forms';

/** Options of {@link dashboard}. */
export interface DashboardOptions {
  /**
   * The token that rule edits must carry (`authorization: Bearer <token>`). Without it the
   * dashboard is read-only. It also lets its bearer read when `readToken` is set.
   * @defaultValue none (read-only)
   */
  readonly token?: string;
  /**
   * The token that reads must carry (`api/state`, `api/rules`, `api/resources`, `events`; the page asks for it):
   * `authorization: Bearer <readToken>`, or the edit `token`. The same value as `token` makes one
   * token for both. The page's files (HTML, script, style) hold no data and need none. Without it,
   * anyone who can reach the dashboard can read it: mount it where only operators can.
   * @defaultValue none (reads open)
   */
  readonly readToken?: string;
  /**
   * A durable rule store that edits are written through (`fileRuleSource()`, or Redis via
   * `publishRules`), so every instance and every restart gets them. Without one, edits are
   * applied to this engine with `loadRules` and last until the process restarts.
   * @defaultValue none
   */
  readonly store?: RuleStore;
  /** How often connected pages are updated, in ms (100 to 60,000). @defaultValue 1000 */
  readonly intervalMs?: number;
  /** Seconds of history kept per resource while a page is connected (60 to 3600). @defaultValue 300 */
  readonly historySeconds?: number;
  /** Most resources charted (their history kept while a page is open); the others are counted. @defaultValue 200 */
  readonly maxResources?: number;
  /**
   * Most resources, rules and breakers in one answer: the page shows them a page at a time
   * (`api/state?resources=<page>&rules=<page>`, `events?resources=<page>`, `api/rules?page=<page>`,
   * pages from 0). @defaultValue 50
   */
  readonly pageSize?: number;
  /**
   * Reads answered per second, all readers together: the QPS rule declared on the resource
   * `floodgate-dashboard:read`; more are answered 429. @defaultValue 20
   */
  readonly readsPerSecond?: number;
  /**
   * Rule edits carrying the token accepted per second: the QPS rule declared on the resource
   * `floodgate-dashboard:edit`; more are answered 429. @defaultValue 5
   */
  readonly editsPerSecond?: number;
  /** Most recent blocks listed (only those while a page is connected). @defaultValue 20 */
  readonly recentBlocks?: number;
  /** Transitions remembered per breaker. @defaultValue 10 */
  readonly transitionsPerBreaker?: number;
  /** Largest rule edit accepted (the whole layer, or one rule), in bytes. @defaultValue 1048576 (1 MiB) */
  readonly maxBodyBytes?: number;
  /** Most pages connected at once; more are refused with 503. @defaultValue 20 */
  readonly maxPages?: number;
  /**
   * How long an edit waits for the `store` to write, on the engine's clock; a write still
   * pending then is answered 504, so a stalled store (Redis down, its client queueing commands)
   * holds no later edit. @defaultValue 5000
   */
  readonly storeTimeoutMs?: number;
}

/** Options of {@link Dashboard.listen}. */
export interface DashboardListenOptions {
  /** The port; 0 picks a free one. @defaultValue 0 */
  readonly port?: number;
  /**
   * The interface to bind. On a loopback host, requests naming any other `Host` are refused
   * (so a DNS-rebinding page cannot read it). @defaultValue '127.0.0.1'
   */
  readonly host?: string;
}

/** A standalone dashboard server, from {@link Dashboard.listen}. */
export interface DashboardServer {
  /** The page's address, e.g. `http://127.0.0.1:9090/`. */
  readonly url: string;
  readonly server: Server;
  /** Closes the server and every connected page. */
  close(): Promise<void>;
}

/** Defaults of {@link DashboardOptions}. */
export const DASHBOARD_DEFAULTS = Object.freeze({
  /** One update a second. */
  intervalMs: 1000,
  /** Five minutes of history. */
  historySeconds: 300,
  /** Resources charted. */
  maxResources: 200,
  /** Resources, rules and breakers per answer. */
  pageSize: 50,
  /** Reads per second, all readers together. */
  readsPerSecond: 20,
  /** Edits per second. */
  editsPerSecond: 5,
  /** Blocks listed. */
  recentBlocks: 20,
  /** Transitions per breaker. */
  transitionsPerBreaker: 10,
  /** 1 MiB per edit. */
  maxBodyBytes: 1024 * 1024,
  /** Pages at once. */
  maxPages: 20,
  /** Five seconds for a store's write. */
  storeTimeoutMs: 5000,
});

const RANGES = Object.freeze({
  intervalMs: [100, 60_000],
  historySeconds: [60, 3600],
  maxResources: [1, 10_000],
  pageSize: [1, 1000],
  readsPerSecond: [1, 100_000],
  editsPerSecond: [1, 1000],
  recentBlocks: [1, 10_000],
  transitionsPerBreaker: [1, 1000],
  maxBodyBytes: [1024, 64 * 1024 * 1024],
  maxPages: [1, 1000],
  storeTimeoutMs: [1, 600_000],
} as const);

/** An SSE connection whose unsent data passes this is closed: a stalled page costs bounded memory. */
const MAX_PAGE_BUFFER_BYTES = 4 * 1024 * 1024;

const ASSETS = join(__dirname, '..', 'assets');
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'rule-editor.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};
const SECURITY_HEADERS = Object.freeze({
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
});

/** The options a {@link Dashboard} is made with, every default resolved. */
type ResolvedOptions = Required<Omit<DashboardOptions, 'token' | 'readToken' | 'store'>> &
  Pick<DashboardOptions, 'token' | 'readToken' | 'store'>;

/** The query parameters that name a page, by route. */
const PAGE_PARAMS: Readonly<Record<string, readonly string[]>> = {
  '/api/state': ['resources', 'rules'],
  '/events': ['resources'],
  '/api/rules': ['page'],
  '/api/rules/loaded': [],
  '/api/resources': ['page'],
};

/** `api/rules/loaded/<kind>` (add) and `api/rules/loaded/<kind>/<index>` (replace, delete): one rule at a time. */
const ONE_RULE = /^\/api\/rules\/loaded\/([^/]*)(?:\/([^/]*))?$/;

/** Longest `q` of `api/resources`. */
const MAX_QUERY_LENGTH = 1024;

/** What an edit's `version` may be (the loaded layer's versions are digests of 22 such characters). */
const VERSION = /^[A-Za-z0-9_-]{1,64}$/;

/** One rule edit, as its route names it (the version comes from the query). */
type RuleEditRoute = Omit<RuleChange, 'version'>;

/**
 * The dashboard of one engine: a page served by the package itself (no CDN, works offline),
 * live over server-sent events, with rule editing (one rule at a time by form, or the whole loaded
 * layer as JSON, each edit on the version of the layer it read). One framework-neutral handler
 * ({@link Dashboard.handle}); `express()`, `koa()`, `fastify` and `listen()` only translate.
 * Its reads are built once per interval and shared by every reader, answer at most `pageSize`
 * resources, rules and breakers each, and are limited (with edits) by Floodgate itself, on the
 * resources of {@link DASHBOARD_RESOURCES}.
 */
export class Dashboard {
  private readonly feed: LiveFeed;
  private readonly editor: RuleEditor;
  private readonly readers: BearerTokens | undefined;
  private readonly limits: OwnLimits;
  private readonly assets = new Map<string, Buffer>();
  private readonly connections = new Set<ServerResponse>();
  private readonly maxPages: number;

  /** @internal Use {@link dashboard}. */
  constructor(fg: Floodgate, options: ResolvedOptions) {
    this.feed = new LiveFeed(fg, options);
    this.editor = new RuleEditor(fg, options.token, options.store, options.maxBodyBytes, options.storeTimeoutMs);
    this.readers = options.readToken === undefined ? undefined : new BearerTokens([options.readToken, options.token]);
    this.limits = new OwnLimits(fg, options.readsPerSecond, options.editsPerSecond);
    this.maxPages = options.maxPages;
    for (const name of Object.keys(CONTENT_TYPES)) this.assets.set(name, readFileSync(join(ASSETS, name)));
    this.assets.set('rule-forms.json', Buffer.from(JSON.stringify(ruleForms(Object.keys(fg.getRules())))));
  }

  /** Pages connected now. */
  get pageCount(): number {
    return this.feed.pageCount;
  }

  /** {@link Dashboard.handle}, bound, for the framework mounts. */
  private readonly handler: DashboardHandler = (req, res, path, options) => this.handle(req, res, path, options);

  /**
   * Answers one request. `path` is the part after the mount point (`''` for the mount point
   * itself, which is redirected to its trailing-slash form), with its query string.
   */
  handle(req: IncomingMessage, res: ServerResponse, path = req.url ?? '/', options: HandleOptions = {}): Promise<void> {
    const [route = '', query = ''] = splitQuery(path);
    const method = req.method ?? 'GET';
    const reading = method === 'GET' || method === 'HEAD';
    if (route === '') {
      const [base, originalQuery] = splitQuery(options.originalUrl ?? req.url ?? '/');
      return send(res, 308, { location: `${base}/${originalQuery === undefined ? '' : `?${originalQuery}`}` }, '');
    }
    const asset = route === '/' ? 'index.html' : route.slice(1);
    if (this.assets.has(asset)) {
      if (!reading) return notAllowed(res, 'GET, HEAD');
      const type = CONTENT_TYPES[asset] ?? 'application/json; charset=utf-8';
      return send(res, 200, { 'content-type': type }, method === 'HEAD' ? '' : this.assets.get(asset)!);
    }
    if (route === '/api/rules' && (method === 'PUT' || method === 'POST'))
      return this.edit(req, res, query, undefined, options.body);
    const one = ONE_RULE.exec(route);
    if (one !== null) return this.editOne(req, res, method, one, query, options.body);
    const params = PAGE_PARAMS[route];
    if (params === undefined) return sendJson(res, 404, { message: 'Not found' });
    if (route === '/events' ? method !== 'GET' : !reading)
      return notAllowed(
        res,
        route === '/events' ? 'GET' : route === '/api/rules' ? 'GET, HEAD, PUT, POST' : 'GET, HEAD',
      );
    if (this.readers !== undefined && !this.readers.admits(req)) {
      return sendJson(
        res,
        401,
        { message: 'A valid token is required to read this dashboard (authorization: Bearer <token>)' },
        { 'www-authenticate': 'Bearer' },
      );
    }
    const pages = readPages(query, params);
    if (typeof pages === 'string') return sendJson(res, 400, { message: pages });
    const search = new URLSearchParams(query).get('q') ?? '';
    if (search.length > MAX_QUERY_LENGTH)
      return sendJson(res, 400, { message: `q must be at most ${MAX_QUERY_LENGTH} characters, got ${search.length}` });
    return this.limited(req, res, DASHBOARD_RESOURCES.read, () => {
      switch (route) {
        case '/events':
          return this.stream(req, res, pages.resources ?? 0);
        case '/api/rules':
          return sendJsonText(res, 200, this.feed.rulesJson(pages.page ?? 0));
        case '/api/rules/loaded': {
          const layer = this.editor.loaded();
          return sendJsonText(res, 200, layer.json, { etag: `"${layer.version}"` });
        }
        case '/api/resources':
          return sendJsonText(res, 200, this.feed.resourceNamesJson(search, pages.page ?? 0));
        default:
          return sendJsonText(
            res,
            200,
            withFields(this.feed.snapshotJson(pages.resources ?? 0, pages.rules ?? 0), this.editorState()),
          );
      }
    });
  }

  /**
   * Express: a middleware to mount at a path, e.g. `app.use('/floodgate', dash.express())`.
   * A body already parsed by `express.json()` is used as is.
   */
  express(): ExpressMiddleware {
    return expressMount(this.handler);
  }

  /** Koa: a middleware serving the dashboard under `prefix`, e.g. `app.use(dash.koa('/floodgate'))`. */
  koa(prefix: string): KoaMiddleware {
    return koaMount(this.handler, prefix);
  }

  /**
   * Fastify: a plugin, e.g. `app.register(dash.fastify, { prefix: '/floodgate' })`. It reads
   * request bodies itself (its scope has no content-type parsers of its own).
   */
  get fastify(): FastifyPluginLike {
    return fastifyMount(this.handler);
  }

  /**
   * Serves the dashboard on its own `node:http` server, on 127.0.0.1 unless told otherwise.
   * @example
   * const { url } = await dashboard(fg, { token }).listen({ port: 9090 });
   */
  async listen(options: DashboardListenOptions = {}): Promise<DashboardServer> {
    const host = options.host ?? '127.0.0.1';
    const server = createServer((req, res) => {
      if (!allowedHost(req.headers.host, host, server))
        return void sendJson(res, 421, { message: 'This dashboard answers only to its own address' });
      void this.handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
    return {
      url,
      server,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }

  /** Ends every connected page, stops listening to the engine and withdraws the dashboard's own rules. */
  close(): void {
    for (const res of this.connections) res.destroy();
    this.connections.clear();
    this.feed.close();
    this.editor.close();
    this.limits.close();
  }

  /**
   * A rule edit: the token first (and a JSON body, where one is sent), then the edit budget, then
   * the `version` the edit names (`?version=`, required for one rule: 400 when missing or not one),
   * then the edit itself.
   */
  private edit(
    req: IncomingMessage,
    res: ServerResponse,
    query: string | undefined,
    change: RuleEditRoute | undefined,
    body: unknown,
  ): Promise<void> {
    const refused = this.editor.refuse(req, change?.op !== 'delete');
    if (refused !== undefined) {
      req.resume();
      return sendJson(res, refused.status, refused.body, refused.headers);
    }
    return this.limited(req, res, DASHBOARD_RESOURCES.edit, () => {
      const version = new URLSearchParams(query).get('version') ?? undefined;
      if ((change !== undefined && version === undefined) || (version !== undefined && !VERSION.test(version))) {
        req.resume();
        return sendJson(res, 400, {
          message:
            version === undefined
              ? 'version is required: the version of the loaded rules the edit is made on (the ETag of api/rules/loaded)'
              : `version must be a version of the loaded rules (the ETag of api/rules/loaded), got ${JSON.stringify(version.slice(0, 64))}`,
        });
      }
      const answer =
        change === undefined
          ? this.editor.edit(req, body, version)
          : this.editor.editRule(req, body, { ...change, version: version! });
      return answer.then((a) => sendJson(res, a.status, a.body, a.headers));
    });
  }

  /** `api/rules/loaded/<kind>[/<index>]`: POST adds a rule to the kind, PUT replaces and DELETE deletes the one at the index. */
  private editOne(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    [, kind, index]: RegExpExecArray,
    query: string | undefined,
    body: unknown,
  ): Promise<void> {
    const allow = index === undefined ? 'POST' : 'PUT, DELETE';
    if (!allow.split(', ').includes(method)) {
      req.resume();
      return notAllowed(res, allow);
    }
    if (index !== undefined && !/^\d{1,9}$/.test(index)) {
      req.resume();
      return sendJson(res, 404, {
        message: `A rule is named by its position (0, 1, 2, ...), got ${JSON.stringify(index.slice(0, 40))}`,
      });
    }
    const op = method === 'POST' ? 'add' : method === 'PUT' ? 'replace' : 'delete';
    const change = { op, kind: kind!, ...(index === undefined ? {} : { index: Number(index) }) } as const;
    return this.edit(req, res, query, change, body);
  }

  /** Answers through `answer` within `resource`'s limit, or answers its refusal (the body unread). */
  private limited(
    req: IncomingMessage,
    res: ServerResponse,
    resource: string,
    answer: () => Promise<void>,
  ): Promise<void> {
    const entry = this.limits.enter(resource);
    if (!(entry instanceof Entry)) {
      req.resume();
      return send(res, entry.status, entry.headers, entry.json);
    }
    let answered: Promise<void>;
    try {
      answered = answer();
    } catch (error) {
      entry.exit();
      return Promise.reject(error);
    }
    return answered.finally(() => entry.exit());
  }

  private editorState(): { readOnly: boolean; editTarget: string } {
    return { readOnly: this.editor.readOnly, editTarget: this.editor.target };
  }

  /** One page's server-sent events: a snapshot of its page of resources, then a tick per interval and rule changes. */
  private stream(req: IncomingMessage, res: ServerResponse, resourcePage: number): Promise<void> {
    if (this.feed.pageCount >= this.maxPages)
      return sendJson(res, 503, { message: `At most ${this.maxPages} pages may be connected at once` });
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    res.write(`event: editor\ndata: ${JSON.stringify(this.editorState())}\n\n`);
    this.connections.add(res);
    const unsubscribe = this.feed.subscribe({
      resourcePage,
      send: (event, data) => {
        if (res.writableLength > MAX_PAGE_BUFFER_BYTES) return void res.destroy();
        res.write(`event: ${event}\ndata: ${data}\n\n`);
      },
    });
    const done = (): void => {
      this.connections.delete(res);
      unsubscribe();
    };
    req.socket.setTimeout(0);
    res.once('close', done);
    return Promise.resolve();
  }
}

/**
 * The Floodgate dashboard for an engine: per-resource pass, block and error rates and response
 * times charted live, concurrency, breakers with their last transitions, the rules in force
 * with where each came from, the latest blocks, and rule editing (with `token`), written
 * through a durable `store` when one is given.
 * @throws TypeError naming the option, its allowed range and the value, when one is invalid.
 * @example
 * const dash = dashboard(fg, { token: process.env.FLOODGATE_DASHBOARD_TOKEN, store: fileRuleSource(fg, 'rules.json') });
 * app.use('/floodgate', dash.express());          // Express
 * app.use(dash.koa('/floodgate'));                 // Koa
 * await app.register(dash.fastify, { prefix: '/floodgate' }); // Fastify
 * const { url } = await dash.listen({ port: 9090 }); // or on its own, on 127.0.0.1
 */
export function dashboard(fg: Floodgate, options: DashboardOptions = {}): Dashboard {
  const where = 'dashboard(fg, options)';
  if (typeof fg !== 'object' || fg === null || typeof fg.describeRules !== 'function')
    throw new TypeError(`${where}: fg must be a Floodgate engine`);
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object`);
  const known = new Set(['token', 'readToken', 'store', ...Object.keys(RANGES)]);
  for (const key of Object.keys(options))
    if (!known.has(key))
      throw new TypeError(`${where}: options.${key} is not an option (known: ${[...known].join(', ')})`);
  const { token, readToken, store } = options;
  for (const [name, value] of [
    ['token', token],
    ['readToken', readToken],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0))
      throw new TypeError(`${where}: options.${name} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  if (
    store !== undefined &&
    (typeof store !== 'object' || store === null || typeof store.write !== 'function' || typeof store.name !== 'string')
  ) {
    throw new TypeError(
      `${where}: options.store must have a name and a write(rules) method, such as fileRuleSource(fg, path)`,
    );
  }
  const resolved: Record<string, number> = {};
  for (const [key, [min, max]] of Object.entries(RANGES)) {
    const value =
      (options as Record<string, unknown>)[key] ?? DASHBOARD_DEFAULTS[key as keyof typeof DASHBOARD_DEFAULTS];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new TypeError(
        `${where}: options.${key} must be an integer within [${min}, ${max}], got ${JSON.stringify(value)}`,
      );
    }
    resolved[key] = value;
  }
  return new Dashboard(fg, {
    ...(resolved as Omit<ResolvedOptions, 'token' | 'readToken' | 'store'>),
    token,
    readToken,
    store,
  });
}

function send(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string | Buffer,
): Promise<void> {
  if (!res.headersSent) res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(body);
  return Promise.resolve();
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> {
  return send(res, status, { 'content-type': 'application/json; charset=utf-8', ...headers }, JSON.stringify(body));
}

/** Answers JSON already written as text. */
function sendJsonText(
  res: ServerResponse,
  status: number,
  json: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> {
  return send(res, status, { 'content-type': 'application/json; charset=utf-8', ...headers }, json);
}

/** `json` (an object's JSON) with `fields` first. */
function withFields(json: string, fields: object): string {
  const head = JSON.stringify(fields).slice(1, -1);
  return head === '' ? json : `{${head},${json.slice(1)}`;
}

/** A path and its query string (without the `?`; `undefined` when there is none). */
function splitQuery(path: string): [string, string | undefined] {
  const at = path.indexOf('?');
  return at < 0 ? [path, undefined] : [path.slice(0, at), path.slice(at + 1)];
}

/** The page numbers asked for by the parameters `names` of `query`, or why they are wrong. */
function readPages(query: string, names: readonly string[]): Partial<Record<string, number>> | string {
  const params = new URLSearchParams(query);
  const pages: Record<string, number> = {};
  for (const name of names) {
    const value = params.get(name);
    if (value === null) continue;
    if (!/^\d{1,9}$/.test(value))
      return `${name} must be a page number (0, 1, 2, ...), got ${JSON.stringify(value.slice(0, 40))}`;
    pages[name] = Number(value);
  }
  return pages;
}

function notAllowed(res: ServerResponse, allow: string): Promise<void> {
  return sendJson(res, 405, { message: `Method not allowed (allowed: ${allow})` }, { allow });
}

/** On a loopback bind, only loopback names are accepted in `Host`; elsewhere any. */
function allowedHost(header: string | undefined, host: string, server: Server): boolean {
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) return true;
  const { port } = server.address() as AddressInfo;
  return header === `127.0.0.1:${port}` || header === `localhost:${port}` || header === `[::1]:${port}`;
}
