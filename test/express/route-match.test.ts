import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { resilience } from '@floodgate/express';

/** Every route guarding on Express: the route found before routing is the one Express dispatches to, by its template. */

function appWith(fg: Floodgate): express.Express {
  const app = express();
  app.use(resilience({ floodgate: fg, everyRoute: true }));
  const users = express.Router({ mergeParams: true });
  users.get('/users/:id', (req, res) => res.json({ route: (req.route as { path: string }).path }));
  app.use('/org/:orgId', users);
  app.get(['/a', '/b/:x'], (_req, res) => res.json({ ok: true }));
  app.all('/any', (_req, res) => res.json({ ok: true }));
  app.post('/only-post', (_req, res) => res.json({ ok: true }));
  return app;
}

describe('Express: every route guarding names the route Express dispatches to', () => {
  it('names a route under a mounted router by its whole template, and reads its mount’s parameters', async () => {
    const fg = new Floodgate({ clock: new ManualClock(1000) });
    fg.loadRules({
      hotParams: [{ resource: 'GET /org/:orgId/users/:id', key: { from: 'param', name: 'orgId' }, threshold: 2 }],
    });
    const app = appWith(fg);
    const statuses = [];
    for (const path of ['/org/acme/users/1', '/org/acme/users/2', '/ORG/acme/users/3', '/org/other/users/1'])
      statuses.push((await request(app).get(path)).status);
    expect(statuses).toEqual([200, 200, 429, 200]);
    expect(fg.resourceNames()).toEqual(['GET /org/:orgId/users/:id']);
  });

  it('names each alternative of an array path, an all() route by method, HEAD by its GET', async () => {
    const fg = new Floodgate({ clock: new ManualClock(1000) });
    const app = appWith(fg);
    await request(app).get('/a');
    await request(app).get('/b/7');
    await request(app).head('/b/8');
    await request(app).delete('/any');
    await request(app).get('/only-post');
    expect(fg.resourceNames().sort()).toEqual(['(unmatched)', 'DELETE /any', 'GET /a', 'GET /b/:x'].sort());
  });

  it('fails loudly when mounted under a path rather than at the app’s root', async () => {
    const fg = new Floodgate();
    const app = express();
    const errors: unknown[] = [];
    app.use('/api', resilience({ floodgate: fg, everyRoute: true }));
    app.get('/api/x', (_req, res) => res.json({ ok: true }));
    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      errors.push(err);
      res.status(500).end();
    });
    expect((await request(app).get('/api/x')).status).toBe(500);
    expect(String(errors[0])).toContain("must be mounted at the app's root");
  });
});
