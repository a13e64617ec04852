import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FRAMEWORKS, type Framework } from '../../../bench/http/http-variant';
import { startServer } from '../../../bench/http/start-server';
import { drive, runHttpCase } from '../../../bench/instructions/http-instruction-case';
import { caseRun, HTTP_INSTRUCTION_CASES } from '../../../bench/instructions/instruction-runs';
import { steppingClock } from '../../../bench/instructions/stepping-clock';

describe('the HTTP instruction count cases', () => {
  it.each(FRAMEWORKS)(
    'serve %s passing and blocked requests as the variants say, counted after the warm-up',
    async (framework) => {
      // Every request the server starts, by Node's own channel.
      let served = 0;
      const count = (): void => {
        served++;
      };
      subscribe('http.server.request.start', count);
      try {
        for (const variant of ['floodgate', 'floodgate-blocked'] as const) {
          served = 0;
          const servedWhenCounting: number[] = [];
          await runHttpCase(framework, variant, 3, 2, async () => {
            servedWhenCounting.push(served);
          });
          expect(servedWhenCounting).toEqual([3]);
          expect(served).toBe(5);
        }
      } finally {
        unsubscribe('http.server.request.start', count);
      }
    },
  );

  it.each(FRAMEWORKS)(
    "give %s's Floodgate engines the clock they are given (the count's steps with the requests)",
    async (framework) => {
      const stepping = steppingClock();
      let reads = 0;
      const clock = { ...stepping, now: () => (reads++, stepping.now()) };
      const { server, port } = await startServer(framework, 'floodgate', clock);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        await drive(port, agent, 2, 200);
        const afterTwo = reads;
        await drive(port, agent, 2, 200);
        expect(afterTwo).toBeGreaterThan(0);
        expect(reads).toBeGreaterThan(afterTwo);
      } finally {
        agent.destroy();
        server.closeAllConnections?.();
        server.close();
      }
    },
  );

  it('fail naming the status a variant should not answer', async () => {
    const server = createServer((_req, res) => res.writeHead(500).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const { port } = server.address() as AddressInfo;
      await expect(drive(port, agent, 3, 200)).rejects.toThrow('/hello answered 500, not 200');
    } finally {
      agent.destroy();
      server.closeAllConnections();
      server.close();
    }
  });

  it('are named http.<framework>.<variant>, and refuse another build', () => {
    expect(HTTP_INSTRUCTION_CASES['http.fastify.floodgate']).toBe(
      'one floodgate GET on fastify, server and keep-alive client',
    );
    const run = caseRun('http.koa.noop');
    expect([run.fewer, run.more, run.warmsUp]).toEqual([1000, 5000, true]);
    expect(run.args(5).slice(1)).toEqual(['koa', 'noop', '5']);
    expect(() => caseRun('http.koa.noop', '/elsewhere/index.js')).toThrow(
      'http.koa.noop: --against counts core cases only',
    );
    expect(() => caseRun('http.koa.nothing')).toThrow('unknown case http.koa.nothing');
  });

  it('name a server the suite does not have', async () => {
    await expect(runHttpCase('hapi' as Framework, 'noop', 1, 1, async () => undefined)).rejects.toThrow(
      'no server hapi noop: frameworks express|koa|fastify',
    );
  });
});
