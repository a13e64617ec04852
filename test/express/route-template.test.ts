import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { hotParam, rateLimit } from '@floodgate/express';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';

const ok: RequestHandler = (_req, res) => void res.json({ ok: true });

/** Collects what reaches the error handlers, answering 500. */
function withErrors(app: express.Express): unknown[] {
  const errors: unknown[] = [];
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    errors.push(err);
    res.status(500).end();
  });
  return errors;
}

async function resourceOfBlock(app: express.Express, path: string): Promise<string> {
  return JSON.parse((await request(app).get(path).expect(429)).text).resource as string;
}

describe('per-route resources of mounted routers', () => {
  let clock: ManualClock;
  let fg: Floodgate;

  beforeEach(() => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
  });

  /** An app with `GET /users/:id` guarded by `guard` (by default 1/s) in a router mounted at `mount`. */
  function usersAt(
    mount: string | RegExp | string[],
    guard = rateLimit({ floodgate: fg, threshold: 1 }),
    mergeParams = false,
  ): express.Express {
    const app = express();
    const users = express.Router({ mergeParams });
    users.get('/users/:id', guard, ok);
    app.use(mount, users);
    return app;
  }

  /** An app with `GET /users/:id` guarded by `guard` in a sub-app mounted through a router, which Express does not record. */
  function subAppThroughRouter(guard: RequestHandler): express.Express {
    const app = express();
    const router = express.Router();
    const org = express();
    org.get('/users/:id', guard, ok);
    router.use('/org/:orgId', org);
    app.use(router);
    return app;
  }

  it('names the resource by the route’s template, mount path included, whatever org id a request names', async () => {
    const app = usersAt('/org/:orgId');
    for (let org = 0; org < 20; org++) await request(app).get(`/org/o${org}/users/1`);
    expect(fg.resourceNames()).toEqual(['GET /org/:orgId/users/:id']);
    expect(fg.describeRules()).toHaveLength(1);
  });

  it('refuses the second request of a window whatever org id it names', async () => {
    const app = usersAt('/org/:orgId');
    await request(app).get('/org/acme/users/1').expect(200);
    expect(await resourceOfBlock(app, '/org/globex/users/1')).toBe('GET /org/:orgId/users/:id');
  });

  /** App shapes putting one route under mount parameters, and the templates each may name. */
  const SHAPES: readonly {
    readonly name: string;
    readonly templates: readonly string[];
    mount(app: express.Express, route: RequestHandler[]): void;
  }[] = [
    ...[false, true].map((mergeParams) => ({
      name: `routers nested two deep, mergeParams ${mergeParams}`,
      templates: ['GET /org/:orgId/teams/:teamId/users/:id'],
      mount(app: express.Express, route: RequestHandler[]) {
        const orgs = express.Router({ mergeParams });
        const teams = express.Router({ mergeParams });
        teams.get('/users/:id', ...route);
        orgs.use('/teams/:teamId', teams);
        app.use('/org/:orgId', orgs);
      },
    })),
    {
      name: 'a router in a sub-app',
      templates: ['GET /org/:orgId/teams/:teamId/users/:id'],
      mount(app, route) {
        const org = express();
        const teams = express.Router();
        teams.get('/users/:id', ...route);
        org.use('/teams/:teamId', teams);
        app.use('/org/:orgId', org);
      },
    },
    {
      name: 'a router mounted at an array of paths (a template each)',
      templates: ['GET /org/:orgId/teams/:teamId/users/:id', 'GET /o/:orgId/t/:teamId/users/:id'],
      mount(app, route) {
        const teams = express.Router();
        teams.get('/users/:id', ...route);
        app.use(['/org/:orgId/teams/:teamId', '/o/:orgId/t/:teamId'], teams);
      },
    },
  ];

  describe.each(SHAPES)('$name', (shape) => {
    const LIMIT = 3;
    const clock = new ManualClock(10_000);
    const fg = new Floodgate({ clock });
    const handled = new Map<string, number>();
    let server: Server;

    beforeAll(async () => {
      const app = express();
      shape.mount(app, [
        rateLimit({ floodgate: fg, threshold: LIMIT }),
        (req, res) => {
          // Budgets are per template: count runs by the way the request came (its first segment).
          const way = req.originalUrl.split('/')[1]!.toLowerCase();
          handled.set(way, (handled.get(way) ?? 0) + 1);
          res.json({ ok: true });
        },
      ]);
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
    });

    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it(
      'never runs the handler more often in a window than its limit, and keeps its resources and rules, across mount parameter values',
      async () => {
        // Any text, as a client would escape it into a path segment.
        const value = fc
          .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
          .map(encodeURIComponent)
          .filter((v) => v !== '.' && v !== '..');
        const target = fc.record({
          short: fc.boolean(),
          upper: fc.boolean(),
          slash: fc.boolean(),
          org: value,
          team: value,
          id: value,
        });
        await fc.assert(
          fc.asyncProperty(fc.array(target, { minLength: 1, maxLength: 24 }), async (targets) => {
            await clock.advance(2000);
            handled.clear();
            const sent = new Map<string, number>();
            for (const { short, upper, slash, org, team, id } of targets) {
              const way = short && shape.templates.length > 1 ? 'o' : 'org';
              const [o, t, u] = way === 'o' ? ['o', 't', 'users'] : ['org', 'teams', 'users'];
              const literal = (segment: string): string => (upper ? segment.toUpperCase() : segment);
              const url = `/${literal(o)}/${org}/${literal(t)}/${team}/${literal(u)}/${id}${slash ? '/' : ''}`;
              await request(server)
                .get(url)
                .expect((res) => expect([200, 429]).toContain(res.status));
              sent.set(way, (sent.get(way) ?? 0) + 1);
            }
            for (const [way, count] of sent) expect(handled.get(way) ?? 0).toBe(Math.min(LIMIT, count));
            expect(shape.templates).toEqual(expect.arrayContaining(fg.resourceNames()));
            expect(fg.describeRules().length).toBeLessThanOrEqual(shape.templates.length);
          }),
          propertyRuns(40),
        );
        expect(fg.resourceNames().sort()).toEqual([...shape.templates].sort());
      },
      propertyTimeoutMs(40),
    );
  });

  it('limits by a mount parameter’s value when the router merges params', async () => {
    const app = usersAt('/org/:orgId', hotParam({ floodgate: fg, param: 'orgId', threshold: 1 }), true);
    await request(app).get('/org/acme/users/1').expect(200);
    await request(app).get('/org/acme/users/2').expect(429);
    await request(app).get('/org/globex/users/1').expect(200);
    expect(fg.resourceNames()).toEqual(['GET /org/:orgId/users/:id']);
  });

  it('refuses a hotspot param naming a mount parameter the router does not merge', async () => {
    const app = usersAt('/org/:orgId', hotParam({ floodgate: fg, param: 'orgId', threshold: 1 }));
    const errors = withErrors(app);
    await request(app).get('/org/acme/users/1').expect(500);
    expect(errors[0]).toMatchObject({ name: 'RuleValidationError' });
    expect(String(errors[0])).toContain('GET /org/:orgId/users/:id');
  });

  it('names a sub-app’s routes by its mount path', async () => {
    const app = express();
    const org = express();
    org.get('/users/:id', rateLimit({ floodgate: fg, threshold: 1 }), ok);
    app.use('/org/:orgId', org);
    await request(app).get('/org/acme/users/1').expect(200);
    expect(await resourceOfBlock(app, '/org/globex/users/1')).toBe('GET /org/:orgId/users/:id');
  });

  it('names a route of a router inside a sub-app inside a sub-app by every mount path on the way', async () => {
    const app = express();
    const region = express();
    const org = express();
    const users = express.Router();
    users.get('/:id', rateLimit({ floodgate: fg, threshold: 1 }), ok);
    org.use('/users', users);
    region.use('/org/:orgId', org);
    app.use('/:region', region);
    await request(app).get('/eu/org/acme/users/1').expect(200);
    expect(await resourceOfBlock(app, '/us/org/globex/users/2')).toBe('GET /:region/org/:orgId/users/:id');
  });

  it('gives each path of an array mount its own template, one budget each whatever the values', async () => {
    const app = usersAt(['/v1/:tenant', '/v2/:tenant']);
    await request(app).get('/v1/a/users/1').expect(200);
    expect(await resourceOfBlock(app, '/v1/b/users/1')).toBe('GET /v1/:tenant/users/:id');
    await request(app).get('/v2/c/users/1').expect(200);
    expect(await resourceOfBlock(app, '/v2/d/users/1')).toBe('GET /v2/:tenant/users/:id');
    expect(fg.resourceNames().sort()).toEqual(['GET /v1/:tenant/users/:id', 'GET /v2/:tenant/users/:id']);
    expect(fg.describeRules()).toHaveLength(2);
  });

  it('gives each path of a route registered with an array its own template', async () => {
    const app = express();
    const users = express.Router();
    users.get(['/users/:id', '/people/:id'], rateLimit({ floodgate: fg, threshold: 1 }), ok);
    app.use('/org/:orgId', users);
    await request(app).get('/org/a/people/1').expect(200);
    expect(await resourceOfBlock(app, '/org/b/people/2')).toBe('GET /org/:orgId/people/:id');
    await request(app).get('/org/a/users/1').expect(200);
    expect(await resourceOfBlock(app, '/org/b/users/2')).toBe('GET /org/:orgId/users/:id');
  });

  it('names a route under a RegExp mount by the RegExp, one resource whatever it matched', async () => {
    const app = usersAt(/^\/org\/([a-z]+)/);
    await request(app).get('/org/acme/users/1').expect(200);
    expect(await resourceOfBlock(app, '/org/globex/users/1')).toBe('GET /^\\/org\\/([a-z]+)//users/:id');
    expect(fg.resourceNames()).toHaveLength(1);
  });

  it('tells apart the mounts of a router mounted twice', async () => {
    const app = express();
    const items = express.Router();
    items.get('/items/:id', rateLimit({ floodgate: fg, threshold: 1 }), ok);
    app.use('/shop/:shopId', items);
    app.use('/admin', items);
    await request(app).get('/admin/items/1').expect(200);
    await request(app).get('/shop/s1/items/1').expect(200);
    expect(await resourceOfBlock(app, '/shop/s2/items/1')).toBe('GET /shop/:shopId/items/:id');
    expect(await resourceOfBlock(app, '/admin/items/2')).toBe('GET /admin/items/:id');
  });

  it('puts HEAD requests on the GET template of a mounted route', async () => {
    const app = usersAt('/org/:orgId');
    await request(app).head('/org/acme/users/1').expect(200);
    await request(app).get('/org/globex/users/1').expect(429);
    expect(fg.resourceNames()).toEqual(['GET /org/:orgId/users/:id']);
  });

  it('fails loudly, naming the route, when it cannot tell the template (a sub-app mounted through a router)', async () => {
    const app = subAppThroughRouter(rateLimit({ floodgate: fg, threshold: 1 }));
    const errors = withErrors(app);
    await request(app).get('/org/acme/users/1').expect(500);
    await request(app).get('/org/globex/users/1').expect(500);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect(String(errors[0])).toContain('rateLimit() cannot tell the template of the route "/users/:id"');
    expect(String(errors[0])).toContain('give it a resource');
    expect(fg.resourceNames()).toEqual([]);
    expect(fg.describeRules()).toEqual([]);
  });

  it('fails loudly, every time, for requests through a mount of a sub-app other than its last', async () => {
    const app = express();
    const org = express();
    org.get('/users/:id', rateLimit({ floodgate: fg, threshold: 5 }), ok);
    app.use('/team/:teamId', org);
    app.use('/org/:orgId', org); // org.mountpath is now '/org/:orgId' alone
    const errors = withErrors(app);
    await request(app).get('/org/acme/users/1').expect(200);
    await request(app).get('/team/t1/users/1').expect(500);
    await request(app).get('/org/globex/users/1').expect(200);
    await request(app).get('/team/t2/users/1').expect(500);
    expect(errors).toHaveLength(2);
    expect(String(errors[1])).toContain('its mount paths do not match "/team/t2"');
    expect(fg.resourceNames()).toEqual(['GET /org/:orgId/users/:id']);
  });

  it('fails loudly when the routers do not keep their mount paths (Express’s router package before 2.3)', async () => {
    const app = usersAt('/org/:orgId');
    // router 2.2 and earlier keep no rawPath on their layers.
    for (const layer of (app.router as unknown as { stack: { rawPath?: unknown }[] }).stack) delete layer.rawPath;
    const errors = withErrors(app);
    await request(app).get('/org/acme/users/1').expect(500);
    expect(String(errors[0])).toContain("does not keep its path (Express's router package before 2.3)");
    expect(fg.resourceNames()).toEqual([]);
  });

  it('guards a route whose template it cannot tell when given a resource', async () => {
    const app = subAppThroughRouter(rateLimit({ floodgate: fg, threshold: 1, resource: 'org users' }));
    await request(app).get('/org/acme/users/1').expect(200);
    expect(await resourceOfBlock(app, '/org/globex/users/1')).toBe('org users');
  });
});
