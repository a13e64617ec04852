import { Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { floodgateInterceptor, hostKey } from '@floodgate/undici';
import fc from 'fast-check';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { Harness } from './harness';

describe('hostKey', () => {
  it.each([
    ['https://api.example.com', 'api.example.com'],
    ['http://API.Example.COM', 'api.example.com'],
    ['https://api.example.com.', 'api.example.com'],
    ['https://api.example.com..', 'api.example.com'],
    ['https://api.example.com:443', 'api.example.com'],
    ['http://api.example.com:80', 'api.example.com'],
    ['http://api.example.com:443', 'api.example.com'],
    ['https://user:secret@api.example.com', 'api.example.com'],
    ['https://%61pi.example.com', 'api.example.com'],
    ['https://bücher.example', 'xn--bcher-kva.example'],
    ['https://BÜCHER.example', 'xn--bcher-kva.example'],
    ['http://localhost:8080', 'localhost:8080'],
    ['http://127.0.0.1:3000', '127.0.0.1:3000'],
    ['http://[::1]:9000', '[::1]:9000'],
    ['http://[0:0:0:0:0:0:0:1]', '[::1]'],
    ['api.example.com', 'api.example.com'],
  ])('names %s as %s', (origin, key) => {
    expect(hostKey(origin)).toBe(key);
  });

  it.each(['ftp://example.com', 'not a url', 'http://', `http://${'a'.repeat(254)}.com`])(
    'names no resource for %s',
    (origin) => {
      expect(hostKey(origin)).toBeUndefined();
    },
  );
});

describe('outbound resources', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.close());

  it('gives a listed route its own resource, and folds every other path of its host into the host', async () => {
    const upstream = await h.upstream();
    const { dispatcher } = h.agent({
      hosts: { [upstream.host]: { routes: { 'GET /users/:id': { maxConcurrency: 5 } } } },
    });
    const paths = ['/users/1', '/USERS/2', '/users/%33', '//users/4/', '/users/5?full=1', '/orders/1', '/users', '/'];
    for (const path of paths)
      await h.settle(dispatcher.request({ origin: upstream.origin, path, method: 'GET' }).then((r) => r.body.text()));
    await h.settle(
      dispatcher.request({ origin: upstream.origin, path: '/users/6', method: 'DELETE' }).then((r) => r.body.text()),
    );
    const route = `GET ${upstream.host}/users/:id`;
    expect(h.fg.resourceNames().sort()).toEqual([route, upstream.host].sort());
    expect(h.fg.totals(route)!.pass).toBe(5);
    expect(h.fg.totals(upstream.host)!.pass).toBe(4);
    expect(h.fg.getRules().flow).toEqual([expect.objectContaining({ resource: route, threshold: 5 })]);
  });

  it('declares the rules of listed hosts and routes at once, in the engine, where rule sources can replace them', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    floodgateInterceptor({
      floodgate: fg,
      hosts: {
        'api.example.com': { circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 } },
      },
    });
    expect(fg.describeRules()).toContainEqual(
      expect.objectContaining({
        kind: 'circuitBreakers',
        resource: 'api.example.com',
        layer: 'declared',
        inForce: true,
      }),
    );
    fg.loadRules({
      circuitBreakers: [{ resource: 'api.example.com', strategy: 'errorCount', threshold: 9, retryTimeoutMs: 10 }],
    });
    expect(fg.getRules().circuitBreakers).toEqual([expect.objectContaining({ strategy: 'errorCount', threshold: 9 })]);
  });

  it('withdraws what it declared', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    const interceptor = floodgateInterceptor({ floodgate: fg, hosts: { 'api.example.com': {} } });
    expect(fg.getRules().retryBudgets).toHaveLength(1);
    interceptor.withdraw();
    expect(fg.getRules().retryBudgets).toHaveLength(0);
  });

  it('refuses a host key not written as resources name it', () => {
    expect(() => floodgateInterceptor({ hosts: { 'API.example.com:443': {} } })).toThrow(
      'hosts["API.example.com:443"]: must be written as resources name it: "api.example.com"',
    );
    expect(() => floodgateInterceptor({ hosts: { 'api.example.com': { routes: { 'GET users': {} } } } })).toThrow(
      RuleValidationError,
    );
  });

  it('sends calls to hosts past maxHosts unguarded, with one warning', async () => {
    const upstreams = [await h.upstream(), await h.upstream(), await h.upstream()];
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const { dispatcher } = h.agent({ maxHosts: 2 });
      for (const upstream of [...upstreams, ...upstreams])
        await h.settle(
          dispatcher.request({ origin: upstream.origin, path: '/', method: 'GET' }).then((r) => r.body.text()),
        );
      expect(h.fg.resourceNames().sort()).toEqual([upstreams[0]!.host, upstreams[1]!.host].sort());
      expect(upstreams[2]!.hits).toBe(2);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('maxHosts'), { code: 'FLOODGATE_MAX_HOSTS' });
    } finally {
      warn.mockRestore();
    }
  });

  it(
    'keeps the resources bounded whatever hosts and paths are called: spellings of one host are one resource',
    async () => {
      const upstream = await h.upstream();
      const { dispatcher } = h.agent({
        maxHosts: 3,
        hosts: { [upstream.host]: { routes: { 'GET /items/:id': {}, 'POST /items': {} } } },
      });
      const spelling = fc.record({
        scheme: fc.constantFrom('http', 'HTTP', 'hTtP'),
        userinfo: fc.constantFrom('', 'u@', 'u:p@'),
        host: fc.constantFrom('127.0.0.1', '127.0.0.1.', '127.000.000.001', '0x7f.0.0.1', '2130706433'),
        method: fc.constantFrom('GET', 'POST', 'DELETE'),
        path: fc.oneof(
          fc.webPath(),
          fc.stringMatching(/^\/items\/[A-Za-z0-9%]{1,8}$/),
          fc.constantFrom('/ITEMS', '/items/', '//items//x', '/items/%2F'),
        ),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(spelling, { minLength: 1, maxLength: 10 }), async (calls) => {
          for (const call of calls) {
            const origin = `${call.scheme}://${call.userinfo}${call.host}:${upstream.port}`;
            const path = call.path.startsWith('/') ? call.path : `/${call.path}`;
            await h.settle(
              dispatcher
                .request({ origin, path, method: call.method, ...(call.method === 'POST' ? { body: 'x' } : {}) })
                .then((r) => r.body.text()),
            );
          }
          const allowed = new Set([upstream.host, `GET ${upstream.host}/items/:id`, `POST ${upstream.host}/items`]);
          for (const name of h.fg.resourceNames()) expect(allowed.has(name)).toBe(true);
        }),
        propertyRuns(30),
      );
    },
    propertyTimeoutMs(30),
  );
});
