import { createServer } from 'node:http';
import request from 'supertest';
import { createApp } from '../../examples/koa/app';
import { closeServer, runExampleApi, runExampleProcess } from '../http/example-api';

runExampleApi('koa', async (options) => {
  const server = createServer(createApp(options).callback());
  return { server, close: () => closeServer(server) };
});

describe('examples/koa defaults', () => {
  runExampleProcess('koa');

  it('builds its own engine and upstream when given none', async () => {
    await request(createApp().callback()).get('/users/1').set('x-user-id', 'a').expect(200);
  });
});
