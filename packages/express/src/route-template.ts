import { templateParamNames } from '@floodgate/core/http';
import type { Request } from 'express';

/** The template of the route a request matched, mounts included, and the route's own parameters. */
export interface RouteTemplate {
  /** The template, mounts included: `'/org/:orgId/users/:id'`; a RegExp path reads as `String(regexp)`. */
  readonly text: string;
  /** The parameters of the route's own path (a mount's reach the route only with `mergeParams`, through `req.params`). */
  readonly paramNames: readonly string[];
}

/** A path as Express registers it. */
type PathAlternative = string | RegExp;

/** What the `router` package keeps of a registered path: a layer of a router's stack. */
interface Layer {
  /** The route of a route layer (`router.get(...)`). */
  readonly route?: unknown;
  /** The handler: a nested router keeps its own `stack`. */
  readonly handle: { readonly stack?: unknown };
  /** The path as registered (an array flattened), router 2.3 and later. */
  readonly rawPath?: PathAlternative | readonly PathAlternative[];
  /** A layer used at `'/'`: it matches every path and takes none of it. */
  readonly slash?: boolean;
  /** Matches a path (router 2.3 and later: the part it takes and which alternative matched). */
  match(path: string): { readonly path: string; readonly pattern?: PathAlternative } | false;
}

/** What a route's requests carry of an app: its router, and if it is a mounted sub-app, where. */
interface ExpressApp {
  readonly router: { readonly stack: readonly Layer[] };
  readonly parent?: ExpressApp;
  readonly mountpath?: PathAlternative | readonly PathAlternative[];
}

/** One way down to a route: the layers it passes, outermost first, and the route's own layer. */
interface Way {
  readonly mounts: readonly Layer[];
  readonly route: Layer;
  /** Each layer's alternatives (one unless it was registered with an array), mounts then route. */
  readonly alternatives: readonly (readonly PathAlternative[])[];
  /** The template of each combination of alternatives, by its mixed-radix index. */
  readonly templates: readonly RouteTemplate[];
}

/**
 * What is known of a route of an app: its one template (once a request confirmed it), the ways
 * to pick from (`settles`: whether one request confirming a lone template is enough), or why
 * it has no template.
 */
type Resolution =
  | { readonly only: RouteTemplate }
  | { readonly ways: readonly Way[]; readonly settles: boolean }
  | { readonly problem: string };

const resolutions = new WeakMap<object, WeakMap<object, Resolution>>();

/**
 * The template of the route `req` matched (`route`, Express's `req.route`), mounts included:
 * `'/org/:orgId/users/:id'` for `router.get('/users/:id', ...)` under `app.use('/org/:orgId',
 * router)`, whatever org id the request names. Express puts only the concrete mount path on the
 * request (`req.baseUrl`, `'/org/acme'`), so the template is read from the routers: the first
 * time a route serves a request, the app's routers are walked for the ways down to it (each
 * layer keeps the path it was registered with, `rawPath`, since router 2.3; a sub-app its
 * `mountpath`), cached by app and route, so memory is bounded by the app's routes, never by
 * request paths. A route reachable one way has one template, read from the cache once a
 * request has matched it. Otherwise (an array of paths, a router mounted twice, a route of a
 * sub-app) each request is matched against the ways with the routers' own matchers, as the
 * router matched it, to pick its template.
 * @throws TypeError naming the route when its template cannot be told (a router older than 2.3
 *   under a mount path, a sub-app mounted through a router or at another path than its last):
 *   `name` then needs a `resource`.
 */
export function routeTemplate(req: Request, route: { readonly path: unknown }, name: string): RouteTemplate {
  const app = req.app as unknown as ExpressApp;
  let byRoute = resolutions.get(app);
  if (byRoute === undefined) {
    byRoute = new WeakMap();
    resolutions.set(app, byRoute);
  }
  let resolution = byRoute.get(route);
  if (resolution === undefined) {
    resolution = resolve(app, route);
    byRoute.set(route, resolution);
  }
  if ('only' in resolution) return resolution.only;
  if ('problem' in resolution) throw unknownTemplate(name, route, resolution.problem);
  const { ways, settles } = resolution;
  const template = pick(ways, req.baseUrl, req.path);
  if (template === undefined) {
    throw unknownTemplate(
      name,
      route,
      `its mount paths do not match "${req.baseUrl}" (a sub-app mounted through a router, or at several paths)`,
    );
  }
  // A route reachable one way: confirmed by this request, its template is all there is to read.
  if (settles && ways.length === 1 && ways[0]!.templates.length === 1) byRoute.set(route, { only: template });
  return template;
}

function unknownTemplate(name: string, route: { readonly path: unknown }, problem: string): TypeError {
  return new TypeError(
    `${name} cannot tell the template of the route "${String(route.path)}": ${problem}; give it a resource`,
  );
}

/** Walks the app's routers once for the ways down to `route`. */
function resolve(app: ExpressApp, route: unknown): Resolution {
  const ways: Way[] = [];
  const seen = new Set<string>();
  for (const mounts of appMounts(app)) {
    for (const [inner, routeLayer] of waysIn(app.router.stack, route, new Set())) {
      const way = wayOf([...mounts, ...inner], routeLayer);
      if (way === undefined)
        return {
          problem: "a router it is mounted through does not keep its path (Express's router package before 2.3)",
        };
      const key = way.templates.map((t) => t.text).join('\n');
      if (!seen.has(key)) ways.push(way);
      seen.add(key);
    }
  }
  if (ways.length === 0)
    return {
      problem:
        "no way down to it was found from the app serving it (Express's router package before 2.3 keeps no mount paths)",
    };
  // A sub-app mounted at several paths keeps only the last as its mountpath: its routes' requests
  // are each matched, so those through another mount fail, every time, rather than take its name.
  return { ways, settles: app.parent === undefined };
}

/**
 * The layers a sub-app is mounted through, for each way down from the top app: the layers of
 * its parent's router registered with its `mountpath` (`app.use()` puts them there).
 */
function appMounts(app: ExpressApp): Layer[][] {
  const parent = app.parent;
  if (parent === undefined) return [[]];
  const mountpath = flat(app.mountpath ?? '/');
  const layers = parent.router.stack.filter(
    (layer) => layer.route === undefined && layer.handle.stack === undefined && samePaths(pathsOf(layer), mountpath),
  );
  return appMounts(parent).flatMap((outer) => layers.map((layer) => [...outer, layer]));
}

/** The ways down `stack` to the layer of `route`: the mount layers passed, and the route's layer. */
function waysIn(stack: readonly Layer[], route: unknown, visiting: Set<unknown>): [Layer[], Layer][] {
  const found: [Layer[], Layer][] = [];
  for (const layer of stack) {
    if (layer.route === route) found.push([[], layer]);
    const nested = layer.handle.stack;
    if (layer.route !== undefined || !Array.isArray(nested) || visiting.has(nested)) continue;
    visiting.add(nested);
    for (const [mounts, routeLayer] of waysIn(nested as Layer[], route, visiting))
      found.push([[layer, ...mounts], routeLayer]);
    visiting.delete(nested);
  }
  return found;
}

/** A way's alternatives and templates, or `undefined` when a layer does not keep its path. */
function wayOf(mounts: readonly Layer[], route: Layer): Way | undefined {
  const alternatives: PathAlternative[][] = [];
  for (const layer of [...mounts, route]) {
    const paths = pathsOf(layer);
    if (paths === undefined) return undefined;
    alternatives.push(paths);
  }
  let texts = [''];
  for (const [i, paths] of alternatives.entries()) {
    const last = i === alternatives.length - 1;
    texts = texts.flatMap((prefix) => paths.map((path) => prefix + (last ? String(path) : mountText(path))));
  }
  const routePaths = alternatives[alternatives.length - 1]!;
  const templates = texts.map((text, index) => {
    const own = routePaths[index % routePaths.length]!;
    return { text, paramNames: typeof own === 'string' ? templateParamNames(own) : [] };
  });
  return { mounts, route, alternatives, templates };
}

/** A layer's registered paths (one unless an array); `undefined` when the router does not keep them. */
function pathsOf(layer: Layer): PathAlternative[] | undefined {
  if (layer.rawPath !== undefined) return flat(layer.rawPath);
  return layer.slash === true ? ['/'] : undefined;
}

/** A mount path as its template begins: `'/'` and trailing slashes dropped, as `req.baseUrl` drops them. */
function mountText(path: PathAlternative): string {
  return typeof path === 'string' ? path.replace(/\/+$/, '') : String(path);
}

/** A path or (nested) array of paths as the list Express matches in order. */
function flat(paths: PathAlternative | readonly unknown[]): PathAlternative[] {
  return [paths].flat(Infinity) as PathAlternative[];
}

function samePaths(a: readonly PathAlternative[] | undefined, b: readonly PathAlternative[]): boolean {
  return (
    a !== undefined && a.length === b.length && a.every((path, i) => path === b[i] || String(path) === String(b[i]))
  );
}

/**
 * The template of the way (and alternatives) a request took, matched as the router matched it:
 * each mount layer against what is left of `baseUrl` followed by `path` (the route's own part),
 * taking what `baseUrl` says it took; then the route's layer against `path`.
 */
function pick(ways: readonly Way[], baseUrl: string, path: string): RouteTemplate | undefined {
  for (const way of ways) {
    let rest = baseUrl;
    let index = 0;
    let i = 0;
    for (; i < way.mounts.length; i++) {
      const layer = way.mounts[i]!;
      const paths = way.alternatives[i]!;
      if (layer.slash === true) continue; // used at '/': one alternative, takes nothing
      const match = layer.match(rest + path);
      if (match === false) break;
      const taken = match.path.replace(/\/$/, '');
      if (!rest.startsWith(taken) || (rest.length > taken.length && rest[taken.length] !== '/')) break;
      const alternative = paths.length === 1 ? 0 : paths.indexOf(match.pattern!);
      if (alternative < 0) break;
      index = index * paths.length + alternative;
      rest = rest.slice(taken.length);
    }
    if (i < way.mounts.length || rest !== '') continue;
    const routePaths = way.alternatives[way.alternatives.length - 1]!;
    let alternative = 0;
    if (routePaths.length > 1) {
      const match = way.route.match(path);
      alternative = match === false ? -1 : routePaths.indexOf(match.pattern!);
    }
    if (alternative >= 0) return way.templates[index * routePaths.length + alternative];
  }
  return undefined;
}
