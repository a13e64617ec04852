import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  PRETEND_MISSING_VARIABLE,
  PROGRAMS,
  findProgram,
  freePort,
  providePrograms,
  redisProblem,
  serviceBinary,
  startRedisServer,
  testRedisUrl,
} from './test-services';

const ROOT = join(__dirname, '..', '..');

/** Runs `npm run <script> [-- args]` from the repository's root in `env`; resolves to what it did. */
function npmRun(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 50_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** The environment of a machine without `missing`, where installing is not allowed. */
function withoutPrograms(...missing: (keyof typeof PROGRAMS)[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, [PRETEND_MISSING_VARIABLE]: missing.join(',') };
  for (const name of missing) delete env[PROGRAMS[name].variable];
  return env;
}

describe('test services: programs', () => {
  it('gives the tests the path of each program through its variable', () => {
    for (const name of Object.keys(PROGRAMS) as (keyof typeof PROGRAMS)[]) {
      expect(process.env[PROGRAMS[name].variable]).toBe(serviceBinary(name));
    }
  });

  it('names the one apt-get command for every missing program when it may not install them, and installs nothing', () => {
    const log = jest.fn();
    expect(() => providePrograms(withoutPrograms('chromium', 'prometheus'), log)).toThrow(
      'npm test needs prometheus, chromium, not installed here, and may not install them itself (FLOODGATE_TEST_PRETEND_MISSING is set). ' +
        'Install them with:\n\n    apt-get install -y prometheus chromium\n\n' +
        'then run npm test again (or set FLOODGATE_PROMETHEUS_BIN, FLOODGATE_CHROMIUM_BIN to the programs).',
    );
    expect(log).not.toHaveBeenCalled();
  });

  it('refuses a program variable that names no executable file, naming the variable', () => {
    expect(() => findProgram('chromium', { ...process.env, FLOODGATE_CHROMIUM_BIN: '/nonexistent/chromium' })).toThrow(
      'FLOODGATE_CHROMIUM_BIN=/nonexistent/chromium: no executable file there',
    );
  });

  it('fails npm test at its first step, once, naming the command, when redis-server is missing and may not be installed', async () => {
    // Only the first two steps: were the first to pass, this would type-check, never run jest again.
    const run = await npmRun('test', ['services', 'typecheck'], withoutPrograms('redis-server'));
    expect(run.code).toBe(1);
    expect(run.output.split('npm test needs redis-server').length - 1).toBe(1);
    expect(run.output).toContain('apt-get install -y redis-server');
    expect(run.output).toContain('npm test: step services failed');
    expect(run.output).toContain('not run: typecheck');
  }, 60_000);
});

describe('test services: Redis', () => {
  let silent: Server;
  let silentPort: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a stalled Redis.
    silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('gives the tests a Redis that answers', async () => {
    await expect(redisProblem(testRedisUrl())).resolves.toBeUndefined();
  });

  it('fails at once, naming a given FLOODGATE_REDIS_URL where nothing listens', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const run = await npmRun('test:services', [], { ...process.env, FLOODGATE_REDIS_URL: url });
    expect(run.code).toBe(1);
    expect(run.output).toContain(`FLOODGATE_REDIS_URL=${url}: no Redis answers there (connect ECONNREFUSED 127.0.0.1:`);
    expect(run.output).toContain('unset FLOODGATE_REDIS_URL to let npm test start its own redis-server');
  }, 30_000);

  it('gives up on a given Redis that accepts connections but never answers, naming why', async () => {
    await expect(redisProblem(`redis://127.0.0.1:${silentPort}`, 300)).resolves.toMatch(/timed? ?out/i);
  });

  it('starts a redis-server of its own on a free loopback port, and stops it', async () => {
    const server = await startRedisServer();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    await expect(redisProblem(server.url)).resolves.toBeUndefined();
    await server.stop();
    await expect(redisProblem(server.url, 300)).resolves.toMatch(/ECONNREFUSED/);
  });
});
