import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';

/** How to reach Redis for the tests: set it to use a running server (CI's `.ci/run` does). */
export const REDIS_URL_VARIABLE = 'FLOODGATE_REDIS_URL';

const MISSING =
  `The Redis tests need a real Redis: set ${REDIS_URL_VARIABLE} (e.g. redis://127.0.0.1:6379) ` +
  'or install redis-server (apt-get install -y redis-server) so the tests can start their own.';

/** A redis-server this test file started, on a loopback port of its own. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM, no save) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** Kills the server (SIGKILL: no shutdown of any kind) and waits for it to exit. */
  kill(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered. */
  freeze(): void;
  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void;
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function launch(port: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.FLOODGATE_REDIS_SERVER_BIN || 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    child.once('error', (error: NodeJS.ErrnoException) => fail(error.code === 'ENOENT' ? new Error(MISSING) : error));
    child.once('exit', (code) => fail(new Error(`redis-server exited with code ${code} on port ${port}`)));
    const poll = async (): Promise<void> => {
      for (let i = 0; i < 200 && !settled; i++) {
        if (await accepts(port)) {
          settled = true;
          resolve(child);
          return;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      fail(new Error(`redis-server did not start on port ${port}`));
    };
    void poll();
  });
}

/** Whether something answers PING on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data: Buffer) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Starts a throwaway redis-server (no persistence) on a free loopback port.
 * @throws Error naming what to install when redis-server is missing: Redis tests fail, they
 * never skip.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port);
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.removeAllListeners('exit');
      running.once('exit', () => resolve());
      running.kill('SIGCONT'); // in case it is frozen
      running.kill(signal);
    });
  };
  const stop = (): Promise<void> => end('SIGTERM');
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    async restart() {
      await stop();
      child = await launch(port);
    },
    kill: () => end('SIGKILL'),
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
  };
}

/**
 * The Redis this test file uses: `FLOODGATE_REDIS_URL` when set, else a redis-server of its own
 * (stopped by the returned `close`).
 * @throws Error when neither is available.
 */
export async function testRedis(): Promise<{ url: string; close: () => Promise<void> }> {
  const url = process.env[REDIS_URL_VARIABLE];
  if (url !== undefined && url !== '') return { url, close: async () => undefined };
  const server = await startRedisServer();
  return { url: server.url, close: () => server.stop() };
}

/**
 * Gives every test of the calling file one test Redis (started in `beforeAll`, stopped in
 * `afterAll`); read `url` inside tests and hooks.
 */
export function useTestRedis(): { readonly url: string } {
  let redis: { url: string; close: () => Promise<void> } | undefined;
  beforeAll(async () => {
    redis = await testRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  return {
    get url(): string {
      if (redis === undefined) throw new Error('useTestRedis(): the test Redis is not started yet (read url inside a test or hook)');
      return redis.url;
    },
  };
}
