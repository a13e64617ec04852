import type { Floodgate } from '@floodgate/core';
import { foldCase, requestPath } from '@floodgate/core/http';
import { rulesOf, type ResolvedOptions, type ResolvedPolicy, type ResolvedRoute } from './outbound-options';

/** The longest host name DNS allows: longer ones cannot be called, so they name no resource. */
const MAX_HOST_LENGTH = 253;
/** Most origins whose host name is remembered (a cache of parsing, dropped whole when full). */
const MAX_CACHED_ORIGINS = 4096;

/**
 * The host of an origin as resources name it: the host name in lower case, internationalised
 * names in their ASCII (punycode) form, percent-escapes decoded, trailing dots dropped, user
 * information dropped, and the port kept only when it is neither 80 nor 443
 * (`https://User@API.Example.com.:443` is `api.example.com`; `http://localhost:8080` is
 * `localhost:8080`). `undefined` for what is not an http(s) origin.
 *
 * @example
 * hostKey('https://Bücher.example.') // 'xn--bcher-kva.example'
 */
export function hostKey(origin: string | URL): string | undefined {
  let url: URL;
  try {
    url = typeof origin === 'string' ? new URL(origin.includes('://') ? origin : `http://${origin}`) : origin;
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  let host = url.hostname;
  while (host.endsWith('.')) host = host.slice(0, -1);
  if (host.length === 0 || host.length > MAX_HOST_LENGTH) return undefined;
  const port = url.port;
  return port === '' || port === '80' || port === '443' ? host : `${host}:${port}`;
}

/** What one call is guarded as: its resource and the policy of that resource. */
export interface Guarded {
  readonly resource: string;
  readonly policy: ResolvedPolicy;
}

/** A host the guard knows: its resource and policy, and its routes with theirs. */
interface KnownHost {
  readonly guarded: Guarded;
  readonly routes: readonly (ResolvedRoute & { readonly guarded: Guarded })[];
}

/**
 * The resources of one outbound guard: each host (as {@link hostKey} names it) is a resource,
 * and each route listed for a host is one (`GET api.example.com/users/:id`); every other path
 * folds into its host's. Their rules are declared in the engine (listed hosts at once, others at
 * their first call, at most `maxHosts` of them), so they load, reload and show like any other.
 * The number of resources is bounded by the options, whatever URLs are called.
 */
export class OutboundResources {
  private readonly known = new Map<string, KnownHost>();
  private readonly origins = new Map<string, string | undefined>();
  private readonly withdrawals: (() => void)[] = [];
  private unlisted = 0;
  private warned = false;

  constructor(
    private readonly fg: Floodgate,
    private readonly options: ResolvedOptions,
  ) {
    for (const [host, resolved] of options.hosts) {
      const routes = resolved.routes.map((route) => ({
        ...route,
        guarded: this.declare(`${route.pattern.method} ${host}${route.pattern.path}`, route.policy),
      }));
      this.known.set(host, { guarded: this.declare(host, resolved.policy), routes });
    }
  }

  /** The resource of a call, or `undefined` when it goes unguarded (past `maxHosts`, or not http). */
  resolve(origin: string | URL | undefined, method: string, path: string): Guarded | undefined {
    if (origin === undefined) return undefined;
    const host = this.hostOf(origin);
    if (host === undefined) return undefined;
    let known = this.known.get(host);
    if (known === undefined) {
      if (this.unlisted >= this.options.maxHosts) return this.warnUnguarded();
      this.unlisted++;
      known = { guarded: this.declare(host, this.options.defaults), routes: [] };
      this.known.set(host, known);
    }
    const routes = known.routes;
    if (routes.length === 0) return known.guarded;
    const read = requestPath(path);
    const folded = foldCase(read);
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i]!;
      if (route.pattern.matchPath(method, read, folded, false) !== undefined) return route.guarded;
    }
    return known.guarded;
  }

  /** Withdraws every rule this guard declared. */
  withdraw(): void {
    for (const withdraw of this.withdrawals.splice(0)) withdraw();
  }

  private hostOf(origin: string | URL): string | undefined {
    const text = typeof origin === 'string' ? origin : origin.href;
    if (this.origins.has(text)) return this.origins.get(text);
    const host = hostKey(origin);
    if (this.origins.size >= MAX_CACHED_ORIGINS) this.origins.clear();
    this.origins.set(text, host);
    return host;
  }

  private declare(resource: string, policy: ResolvedPolicy): Guarded {
    const rules = rulesOf(policy, resource);
    if (Object.keys(rules).length > 0) this.withdrawals.push(this.fg.declareRules(rules));
    return { resource, policy };
  }

  private warnUnguarded(): undefined {
    if (!this.warned) {
      this.warned = true;
      process.emitWarning(
        `The outbound guard has given ${this.options.maxHosts} hosts not listed in its options a resource each (maxHosts); calls to further hosts are sent unguarded.`,
        { code: 'FLOODGATE_MAX_HOSTS' },
      );
    }
    return undefined;
  }
}
