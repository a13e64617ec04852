import request from 'supertest';
import { startDashboardDemo, type DashboardDemo } from '../../examples/express/dashboard-demo';
import { until } from '../support/until';

describe('examples/express dashboard demo', () => {
  let demo: DashboardDemo;

  beforeAll(async () => {
    demo = await startDashboardDemo();
  });
  afterAll(() => demo.close());

  it('serves the dashboard, which shows the example’s traffic and its declared rules', async () => {
    const url = new URL(demo.url);
    const agent = request(url.origin);
    await agent.get(url.pathname).expect(200).expect('content-type', 'text/html; charset=utf-8');
    let names: string[] = [];
    await until(
      async () => {
        const state = await agent.get(`${url.pathname}api/state`).expect(200);
        names = (state.body.resources as { name: string }[]).map((r) => r.name);
        return names.includes('GET /users/:id') && names.includes('GET /recommendations');
      },
      'the demo traffic',
      5000,
    );
    const state = await agent.get(`${url.pathname}api/state`).expect(200);
    expect(state.body).toMatchObject({ readOnly: false, editTarget: 'file' });
    expect(state.body.rules).toContainEqual(
      expect.objectContaining({ resource: 'GET /recommendations', kind: 'circuitBreakers', source: 'code' }),
    );
  });
});
