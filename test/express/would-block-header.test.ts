import express from 'express';
import request from 'supertest';
import { rateLimit, resilience } from '@floodgate/express';
import { Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

describe('@floodgate/express and shadow rules', () => {
  let fg: Floodgate;

  beforeEach(() => {
    fg = new Floodgate({ clock: new ManualClock(10_000) });
  });

  const app = (options: object = {}): express.Express => {
    const a = express();
    a.use(resilience({ floodgate: fg, routes: { 'GET /a': {} }, ...options }));
    a.get('/a', (_req, res) => void res.json({ ok: true }));
    return a;
  };

  it('refuses nothing a shadow rule would refuse, and names its kind in the opt-in header', async () => {
    fg.loadRules({ flow: [{ resource: 'GET /a', threshold: 1, mode: 'shadow' }] });
    const server = app({ wouldBlockHeader: true });
    const first = await request(server).get('/a').expect(200);
    expect(first.headers['floodgate-would-block']).toBeUndefined();
    const second = await request(server).get('/a').expect(200);
    expect(second.headers['floodgate-would-block']).toBe('flow');
  });

  it('sends no header unless asked for', async () => {
    fg.loadRules({ flow: [{ resource: 'GET /a', threshold: 0, mode: 'shadow' }] });
    const res = await request(app()).get('/a').expect(200);
    expect(res.headers['floodgate-would-block']).toBeUndefined();
  });

  it('sends the header under a name of its own', async () => {
    fg.loadRules({ flow: [{ resource: 'GET /a', threshold: 0, mode: 'shadow' }] });
    const res = await request(app({ wouldBlockHeader: 'X-Shadow-Limit' }))
      .get('/a')
      .expect(200);
    expect(res.headers['x-shadow-limit']).toBe('flow');
  });

  it('takes the rollout fields in route rules', async () => {
    const a = express();
    a.get('/b', rateLimit({ floodgate: fg, threshold: 0, mode: 'shadow', wouldBlockHeader: true }), (_req, res) =>
      res.json({ ok: true }),
    );
    const res = await request(a).get('/b').expect(200);
    expect(res.headers['floodgate-would-block']).toBe('flow');
  });

  it('refuses a header option that is not a header name, naming it', () => {
    expect(() => resilience({ floodgate: fg, routes: {}, wouldBlockHeader: 'bad header' })).toThrow(
      RuleValidationError,
    );
    expect(() => resilience({ floodgate: fg, routes: {}, wouldBlockHeader: 'bad header' })).toThrow(
      /wouldBlockHeader: must be true, false or a header name, got "bad header"/,
    );
  });
});
