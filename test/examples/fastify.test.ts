import request from 'supertest';
import { createApp } from '../../examples/fastify/app';
import { runExampleApi, runExampleProcess } from '../http/example-api';

runExampleApi('fastify', async (options) => {
  const app = createApp(options);
  await app.ready();
  return { server: app.server, close: () => app.close() };
});

describe('examples/fastify defaults', () => {
  runExampleProcess('fastify');

  it('builds its own engine and upstream when given none', async () => {
    const app = createApp();
    await app.ready();
    await request(app.server).get('/users/1').set('x-user-id', 'a').expect(200);
    await app.close();
  });
});
