import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import { ADAPTIVE_RULE, createApp, SYSTEM_RULE } from '../../examples/overload/app';

const REDUCED_CAPACITY = 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity';

describe('examples/overload createApp', () => {
  let probe: ManualProbe;
  let fg: Floodgate;

  beforeEach(() => {
    probe = new ManualProbe();
    fg = new Floodgate({ clock: new ManualClock(1000), probe });
  });

  it('serves the report while the process is not loaded', async () => {
    const app = createApp({ floodgate: fg, workMs: 1 });
    await request(app).get('/report').expect(200, { ok: true });
    expect(fg.getRules().system).toEqual([{ ...SYSTEM_RULE, retryAfterMs: 1000 }]);
  });

  it('sheds with 503 once the event loop is over 80 % busy and more requests are in flight than BBR allows', async () => {
    const app = createApp({ floodgate: fg, workMs: 1 });
    probe.set({ eventLoopUtilization: 0.95 });
    await request(app).get('/report').expect(200); // nothing else in flight: BBR passes
    fg.entry('GET /report', { inbound: true });
    fg.entry('GET /report', { inbound: true });
    const shed = await request(app).get('/report');
    expect(shed.status).toBe(503);
    expect(shed.headers['retry-after']).toBe('1');
    expect(shed.body).toMatchObject({ type: REDUCED_CAPACITY, code: 'ERR_SYSTEM_BLOCKED', resource: 'GET /report' });
  });

  it('sheds with 503 past the adaptive limit, which starts at minLimit while it measures', async () => {
    const app = createApp({ floodgate: fg, protection: 'adaptive', workMs: 1 });
    for (let i = 0; i < ADAPTIVE_RULE.minLimit!; i++) fg.entry('GET /report', { inbound: true });
    const shed = await request(app).get('/report');
    expect(shed.status).toBe(503);
    expect(shed.body).toMatchObject({ type: REDUCED_CAPACITY, code: 'ERR_FLOW_BLOCKED', resource: 'GET /report' });
  });

  it('does not guard the route without protection', async () => {
    probe.set({ eventLoopUtilization: 1 });
    const app = createApp({ floodgate: fg, protection: 'none', workMs: 1 });
    for (let i = 0; i < 5; i++) fg.entry('GET /report', { inbound: true });
    await request(app).get('/report').expect(200);
    expect(fg.getRules().system).toEqual([]);
  });

  it('builds its own engine when given none', async () => {
    await request(createApp({ workMs: 1 }))
      .get('/report')
      .expect(200);
  });
});
