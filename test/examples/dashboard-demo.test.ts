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
    // Reads beyond readsPerSecond (20) are answered 429: the poll waits those out.
    let state: request.Response | undefined;
    await until(
      async () => {
        const read = await agent.get(`${url.pathname}api/state`);
        if (read.status === 429) return false;
        expect(read.status).toBe(200);
        const names = (read.body.resources as { name: string }[]).map((r) => r.name);
        state = read;
        return names.includes('GET /users/:id') && names.includes('GET /recommendations');
      },
      'the demo traffic',
      5000,
    );
    expect(state!.body).toMatchObject({ readOnly: false, editTarget: 'file' });
    expect(state!.body.rules).toContainEqual(
      expect.objectContaining({ resource: 'GET /recommendations', kind: 'circuitBreakers', source: 'code' }),
    );
  });
});
