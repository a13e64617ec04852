import type { RouteParams } from '@floodgate/core/http';
import type { Request } from 'express';

/** A path as Express registers it. */
type PathAlternative = string | RegExp;

/** What the `router` package (2.3 and later) keeps of a registered path: a layer of a router's stack. */
interface Layer {
  /** The route of a route layer (`router.get(...)`), with the methods it handles. */
  readonly route?: { readonly methods: Readonly<Record<string, boolean | undefined>> };
  /** The handler: a mounted router keeps its own `stack`. */
  readonly handle: { readonly stack?: unknown };
  /** The path as registered. */
  readonly rawPath?: PathAlternative | readonly PathAlternative[];
  /** A layer used at `'/'`. */
  readonly slash?: boolean;
  /** The router's own matcher: the part of the path it takes, its params, and which alternative matched. */
  match(path: string): { readonly path: string; readonly params: RouteParams; readonly pattern?: unknown } | false;
}

/** The route a request will be dispatched to, named by its template (mount paths included). */
export interface FoundRoute {
  /** The resource's method: the request's, `HEAD` on a route without a `HEAD` handler read as `GET`. */
  readonly method: string;
  /** `'/org/:orgId/users/:id'`: the registered paths of the mounts and the route, never the request's path. */
  readonly template: string;
  /** The route's parameters (and its mounts'), decoded by the router. */
  readonly params: RouteParams;
}

/** What a request carries of its app: its router, and where it is mounted if it is a sub-app. */
interface ExpressApp {
  readonly router: { readonly stack: readonly Layer[] };
  readonly parent?: unknown;
  readonly mountpath?: unknown;
}

/** The `parseurl` result the router caches on the request (`req._parsedUrl`), when it is the current URL's. */
interface ParsedUrlCache {
  readonly _parsedUrl?: { readonly _raw?: string; readonly pathname?: string | null };
}

/**
 * The route Express's router will dispatch `req` to, found before routing with the routers' own
 * matchers, layer by layer in their order (as `router.handle` walks them: each layer's `match()`
 * on the path, a route only when it handles the method, a mounted router on what is left of the
 * path once its mount path is taken), or `undefined` when no route matches (the request is a
 * 404, or a malformed path the router refuses). Plain middleware is passed over, as if it went
 * on to `next()`. The template is made of the registered paths only (an alternative of an array
 * path: the one that matched), so no request, however it is spelled, names a resource of its
 * own. Sub-apps (`app.use(path, otherApp)`) are opaque to their parent: their requests are
 * found under the sub-app's own `resilience()`, if it has one.
 */
export function findRoute(req: Request): FoundRoute | undefined {
  const app = req.app as unknown as ExpressApp;
  const path = pathnameOf(req);
  if (path === undefined) return undefined;
  const prefix = app.parent !== undefined && typeof app.mountpath === 'string' ? mountText(app.mountpath) : '';
  return find(app.router.stack, path, req.method, prefix, undefined, new Set());
}

function find(
  stack: readonly Layer[],
  path: string,
  method: string,
  prefix: string,
  mountParams: RouteParams | undefined,
  visiting: Set<unknown>,
): FoundRoute | undefined {
  for (const layer of stack) {
    let match: ReturnType<Layer['match']>;
    try {
      match = layer.match(path);
    } catch {
      // A malformed escape: the router answers the request with an error, no route runs.
      return undefined;
    }
    if (match === false) continue;
    const route = layer.route;
    const pattern = (match.pattern ?? layer.rawPath) as PathAlternative;
    if (route !== undefined) {
      if (!handles(route.methods, method)) continue;
      return {
        method: method === 'HEAD' && route.methods.head !== true ? 'GET' : method,
        template: prefix + String(pattern),
        params: mountParams === undefined ? match.params : { ...mountParams, ...match.params },
      };
    }
    const nested = layer.handle.stack;
    if (!Array.isArray(nested) || visiting.has(nested)) continue;
    // A mounted router sees the path less its mount path, which must end at a segment.
    const taken = match.path;
    const after = path[taken.length];
    if (taken.length > 0 && (!path.startsWith(taken) || (after !== undefined && after !== '/'))) continue;
    const rest = path.slice(taken.length);
    visiting.add(nested);
    const found = find(
      nested as Layer[],
      rest.startsWith('/') ? rest : `/${rest}`,
      method,
      layer.slash === true ? prefix : prefix + mountText(pattern),
      Object.keys(match.params).length === 0 ? mountParams : { ...mountParams, ...match.params },
      visiting,
    );
    visiting.delete(nested);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether a route handles `method` (`HEAD` by its `GET`), as the router's `_handlesMethod`. */
function handles(methods: Readonly<Record<string, boolean | undefined>>, method: string): boolean {
  if (methods._all === true) return true;
  const name = method.toLowerCase();
  if (methods[name] === true) return true;
  return name === 'head' && methods.head !== true && methods.get === true;
}

/** A mount path as its template begins: trailing slashes dropped, as `req.baseUrl` drops them. */
function mountText(path: PathAlternative): string {
  return typeof path === 'string' ? path.replace(/\/+$/, '') : String(path);
}

/**
 * The path the router matches: `parseurl(req).pathname`, which the router cached on the
 * request when it matched the layer this middleware is on; else the target up to `?` or `#`
 * (an absolute-form target by its path).
 */
function pathnameOf(req: Request): string | undefined {
  const url = req.url;
  const cached = (req as unknown as ParsedUrlCache)._parsedUrl;
  if (cached?._raw === url && typeof cached.pathname === 'string') return cached.pathname;
  let start = 0;
  if (url.charCodeAt(0) !== 47 /* / */) {
    const scheme = url.indexOf('://');
    if (scheme <= 0) return url === '*' ? '*' : undefined;
    start = url.indexOf('/', scheme + 3);
    if (start < 0) return '/';
  }
  let end = url.length;
  for (let i = start; i < end; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 /* ? */ || c === 35 /* # */) end = i;
  }
  return url.slice(start, end);
}
