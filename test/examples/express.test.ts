import { createServer } from 'node:http';
import request from 'supertest';
import { createApp } from '../../examples/express/app';
import { closeServer, runExampleApi, runExampleProcess } from '../http/example-api';

runExampleApi('express', async (options) => {
  const server = createServer(createApp(options));
  return { server, close: () => closeServer(server) };
});

describe('examples/express defaults', () => {
  runExampleProcess('express');

  it('builds its own engine and upstream when given none', async () => {
    await request(createApp()).get('/users/1').set('x-user-id', 'a').expect(200);
  });
});
