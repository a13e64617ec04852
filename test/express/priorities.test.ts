import express, { type Request } from 'express';
import request from 'supertest';
import { resilience } from '@floodgate/express';
import { Floodgate, type Priority } from '@floodgate/core';
import type { HttpPriorityHeaderOptions } from '@floodgate/core/http';
import { ManualClock } from '@floodgate/core/testing';
import { collectMetrics } from '@floodgate/prometheus';
import { Registry } from 'prom-client';
import { parseExposition, valueOf } from '../prometheus/support/exposition';

/**
 * An app under a system rule of `maxQps: 10` on a clock that never moves (one window): sheddable
 * requests get 8, default ones up to 10, critical ones up to 11.
 */
function appWith(priority: HttpPriorityHeaderOptions | ((req: Request) => Priority | undefined)): express.Express {
  const fg = new Floodgate({ clock: new ManualClock(10_000) });
  fg.loadSystemRules([{ maxQps: 10 }]);
  const app = express();
  app.use(resilience({ floodgate: fg, priority, routes: { 'GET /a': {} } }));
  app.get('/a', (_req, res) => void res.json({ ok: true }));
  return app;
}

async function statuses(app: express.Express, count: number, header?: string): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    const req = request(app).get('/a');
    seen.push((await (header === undefined ? req : req.set('x-priority', header))).status);
  }
  return seen;
}

describe('request priority over Express', () => {
  it('counts passes and blocks by the priority a header claimed, as Prometheus scrapes them over HTTP', async () => {
    const fg = new Floodgate({ clock: new ManualClock(10_000) });
    fg.loadSystemRules([{ maxQps: 10 }]);
    const registry = new Registry();
    const stop = collectMetrics(fg, { registry });
    const app = express();
    app.get('/metrics', async (_req, res) => void res.type(registry.contentType).send(await registry.metrics()));
    app.use(
      resilience({ floodgate: fg, priority: { header: 'x-priority', max: 'critical' }, routes: { 'GET /a': {} } }),
    );
    app.get('/a', (_req, res) => void res.json({ ok: true }));
    try {
      // Sheddable gets 8 of the 10, default the rest; critical still gets its 11th.
      expect(await statuses(app, 9, 'sheddable')).toEqual([...Array(8).fill(200), 503]);
      expect(await statuses(app, 3)).toEqual([200, 200, 503]);
      expect(await statuses(app, 2, 'critical')).toEqual([200, 503]);
      const samples = parseExposition((await request(app).get('/metrics').expect(200)).text);
      const of = (name: string, priority: Priority): number => valueOf(samples, name, { resource: 'GET /a', priority });
      expect(
        (['critical', 'default', 'sheddable'] as const).map((p) => of('floodgate_passes_by_priority_total', p)),
      ).toEqual([1, 2, 8]);
      expect(
        (['critical', 'default', 'sheddable'] as const).map((p) => of('floodgate_blocks_by_priority_total', p)),
      ).toEqual([1, 1, 1]);
    } finally {
      stop();
    }
  });

  it('reads a priority the client lowers itself to from the header: sheddable requests are refused first', async () => {
    const app = appWith({ header: 'X-Priority' });
    expect(await statuses(app, 9, 'sheddable')).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 503]);
    expect(await statuses(app, 3)).toEqual([200, 200, 503]);
  });

  it('never lets a header claim more than max: critical is read as default unless allowed', async () => {
    const app = appWith({ header: 'x-priority' });
    expect(await statuses(app, 10)).toEqual(Array(10).fill(200));
    expect(await statuses(app, 1, 'critical')).toEqual([503]);
    const trusted = appWith({ header: 'x-priority', max: 'critical' });
    expect(await statuses(trusted, 10)).toEqual(Array(10).fill(200));
    expect(await statuses(trusted, 2, 'CRITICAL ')).toEqual([200, 503]);
  });

  it('reads an unknown, listed or repeated value as default', async () => {
    // After 8 sheddable requests a ninth sheddable one is refused: each 200 below was read as default.
    const app = appWith({ header: 'x-priority' });
    expect(await statuses(app, 8, 'sheddable')).toEqual(Array(8).fill(200));
    // An array sets the header once per value (Node's setHeader), so it comes on two lines.
    const twice = ['sheddable', 'sheddable'] as unknown as string;
    expect((await request(app).get('/a').set('x-priority', twice)).status).toBe(200);
    expect(await statuses(app, 1, 'sheddable, critical')).toEqual([200]);
    const other = appWith({ header: 'x-priority' });
    expect(await statuses(other, 8, 'sheddable')).toEqual(Array(8).fill(200));
    expect(await statuses(other, 1, 'urgent')).toEqual([200]);
  });

  it('takes a function of the request, trusted', async () => {
    const app = appWith((req) => (req.query.vip === '1' ? 'critical' : undefined));
    expect(await statuses(app, 10)).toEqual(Array(10).fill(200));
    expect((await request(app).get('/a?vip=1')).status).toBe(200);
    expect((await request(app).get('/a?vip=1')).status).toBe(503);
  });

  it('names a bad priority option by its field', () => {
    expect(() => resilience({ priority: { header: 'x priority', max: 'top' as never } })).toThrow(
      /priority\.header: must be a header name/,
    );
    expect(() => resilience({ priority: { header: 'x-p', max: 'top' as never } })).toThrow(
      /priority\.max: must be one of critical, default, sheddable, got "top"/,
    );
  });
});
