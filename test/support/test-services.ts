/**
 * The programs and servers the tests use, provided by `npm test` itself (the test-services
 * contract): no step outside `npm ci && npm test`.
 *
 * - Programs: redis-server, prometheus and chromium (Debian packages of the same names). Each is
 *   the file its variable names (`FLOODGATE_REDIS_SERVER_BIN`, `FLOODGATE_PROMETHEUS_BIN`,
 *   `FLOODGATE_CHROMIUM_BIN`) when set, else the one on PATH, else the Debian path. Missing ones
 *   are installed with one `apt-get install` when this may (root, or sudo without a password);
 *   otherwise the run fails once, at the start, with one message naming the command to run.
 * - Redis: `FLOODGATE_REDIS_URL` when given (it must answer at once, else the run fails naming the
 *   URL), else a redis-server of the run's own on a free loopback port, stopped at the end.
 *
 * `npm test` runs this file first (`npm run test:services`: programs and the given URL checked,
 * nothing started); jest's globalSetup and globalTeardown (jest-global-setup.ts,
 * jest-global-teardown.ts) call {@link provideTestServices} and {@link stopTestServices}, which
 * export the four variables to the tests. Tests read them with {@link serviceBinary} and
 * {@link testRedisUrl}, start servers of their own with {@link startRedisServer}, and pick ports
 * with {@link freePort}.
 *
 * `FLOODGATE_TEST_PRETEND_MISSING=chromium,prometheus` makes this believe those programs are
 * absent and that it may not install anything: how the message for a machine without them is
 * checked without uninstalling anything.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import Redis from 'ioredis';

/** The programs the tests use: the variable that names each, its Debian package and path. */
export const PROGRAMS = Object.freeze({
  'redis-server': {
    variable: 'FLOODGATE_REDIS_SERVER_BIN',
    debianPackage: 'redis-server',
    debianPath: '/usr/bin/redis-server',
  },
  prometheus: { variable: 'FLOODGATE_PROMETHEUS_BIN', debianPackage: 'prometheus', debianPath: '/usr/bin/prometheus' },
  chromium: { variable: 'FLOODGATE_CHROMIUM_BIN', debianPackage: 'chromium', debianPath: '/usr/bin/chromium' },
} as const);

/** A program the tests use. */
export type ProgramName = keyof typeof PROGRAMS;

/** The Redis the tests share: given by the user, or started for the run. */
export const REDIS_URL_VARIABLE = 'FLOODGATE_REDIS_URL';

/** Names programs to believe absent, with installing forbidden (to check the message). */
export const PRETEND_MISSING_VARIABLE = 'FLOODGATE_TEST_PRETEND_MISSING';

/** How long a given FLOODGATE_REDIS_URL has to answer PING. */
const REDIS_ANSWER_TIMEOUT_MS = 3000;

type Env = NodeJS.ProcessEnv;

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function onPath(command: string, env: Env): string | undefined {
  return (env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, command))
    .find(isExecutableFile);
}

function pretendMissing(env: Env): string[] {
  return (env[PRETEND_MISSING_VARIABLE] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Where a program is: its variable's file, else PATH, else the Debian path; undefined if absent.
 * @throws Error when the variable is set to something that is not an executable file.
 */
export function findProgram(name: ProgramName, env: Env = process.env): string | undefined {
  const { variable, debianPath } = PROGRAMS[name];
  const given = env[variable];
  if (given !== undefined && given !== '') {
    if (!isExecutableFile(given))
      throw new Error(`${variable}=${given}: no executable file there (unset it to use ${name} from PATH)`);
    return given;
  }
  if (pretendMissing(env).includes(name)) return undefined;
  return onPath(name, env) ?? (isExecutableFile(debianPath) ? debianPath : undefined);
}

/** How this process may run apt-get (as root, or through sudo without a password), or why it may not. */
function aptGetCommand(env: Env): { readonly command: readonly string[] } | { readonly reason: string } {
  if (pretendMissing(env).length > 0) return { reason: `${PRETEND_MISSING_VARIABLE} is set` };
  if (onPath('apt-get', env) === undefined) return { reason: 'apt-get is not on PATH' };
  if (process.getuid?.() === 0) return { command: ['apt-get'] };
  if (onPath('sudo', env) !== undefined && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0)
    return { command: ['sudo', '-n', 'apt-get'] };
  return { reason: 'that needs root or sudo without a password' };
}

/** The one message for programs that are missing and that this may not install, and why. */
export function missingProgramsMessage(
  missing: readonly ProgramName[],
  reason: string,
  env: Env = process.env,
): string {
  const packages = missing.map((name) => PROGRAMS[name].debianPackage).join(' ');
  const variables = missing.map((name) => PROGRAMS[name].variable).join(', ');
  const command =
    onPath('apt-get', env) === undefined
      ? `(your package manager's packages for ${packages})`
      : `${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y ${packages}`;
  const them = missing.length > 1 ? 'them' : 'it';
  return (
    `npm test needs ${missing.join(', ')}, not installed here, and may not install ${them} itself (${reason}). Install ${them} with:\n\n` +
    `    ${command}\n\nthen run npm test again (or set ${variables} to the program${missing.length > 1 ? 's' : ''}).`
  );
}

/** Runs apt-get with its output captured; returns that output, or throws with its last lines. */
function aptGet(command: readonly string[], args: readonly string[]): string {
  const result = spawnSync(command[0]!, [...command.slice(1), '-o', 'DPkg::Lock::Timeout=600', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0)
    throw new Error(
      `${command.join(' ')} ${args.join(' ')} failed (${result.error?.message ?? `exit code ${result.status}`}):\n${output.split('\n').slice(-15).join('\n')}`,
    );
  return output;
}

/**
 * Every program the tests use, by name, installing the missing ones with one apt-get call when
 * allowed (and `apt-get update` first only if that call fails).
 * @throws Error with {@link missingProgramsMessage} when some are missing and may not be installed.
 */
export function providePrograms(
  env: Env = process.env,
  log: (line: string) => void = console.log,
): Record<ProgramName, string> {
  const names = Object.keys(PROGRAMS) as ProgramName[];
  let missing = names.filter((name) => findProgram(name, env) === undefined);
  if (missing.length > 0) {
    const apt = aptGetCommand(env);
    if (!('command' in apt)) throw new Error(missingProgramsMessage(missing, apt.reason, env));
    const { command } = apt;
    const packages = missing.map((name) => PROGRAMS[name].debianPackage);
    log(`npm test: installing ${packages.join(', ')} (${command.join(' ')} install -y), once for this machine...`);
    const install = ['install', '-y', '--no-install-recommends', ...packages];
    try {
      aptGet(command, install);
    } catch {
      aptGet(command, ['update']);
      aptGet(command, install);
    }
    missing = names.filter((name) => findProgram(name, env) === undefined);
    if (missing.length > 0)
      throw new Error(
        `apt-get installed ${packages.join(', ')}, yet ${missing.join(', ')} cannot be found on PATH or at ${missing.map((n) => PROGRAMS[n].debianPath).join(', ')}`,
      );
  }
  return Object.fromEntries(names.map((name) => [name, findProgram(name, env)!])) as Record<ProgramName, string>;
}

/** Resolves to undefined when a Redis at `url` answers PING within `timeoutMs`, else to why not. */
export async function redisProblem(url: string, timeoutMs = REDIS_ANSWER_TIMEOUT_MS): Promise<string | undefined> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    disconnectTimeout: 50,
  });
  let cause: string | undefined; // the socket's error, which says more than the rejection ('Connection is closed.')
  client.on('error', (error: Error) => (cause ??= error.message));
  try {
    await client.connect();
    const answer = await client.ping();
    return answer === 'PONG' ? undefined : `it answered PING with ${answer}`;
  } catch (error) {
    return cause ?? (error instanceof Error ? error.message : String(error));
  } finally {
    client.disconnect();
  }
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A redis-server on a loopback port of its own, without persistence. */
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

/** Starts redis-server on `port` and waits until it answers PING. */
async function launchRedis(bin: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`${bin} could not start: ${error.message}`));
    child.once('exit', (code) => resolve(`${bin} exited with code ${code} on port ${port}: ${stderr.trim()}`));
  });
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const outcome = await Promise.race([
      ended,
      redisProblem(url, 200).then((problem) => (problem === undefined ? 'up' : undefined)),
    ]);
    if (outcome === 'up') {
      child.removeAllListeners('exit');
      // Should this process exit without stopping the server (an uncaught error), the server goes
      // with it; Ctrl-C reaches the server directly (one process group).
      const killOnExit = (): void => void child.kill('SIGKILL');
      process.once('exit', killOnExit);
      child.once('exit', () => process.removeListener('exit', killOnExit));
      return child;
    }
    if (outcome !== undefined) throw new Error(outcome);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`${bin} did not answer on port ${port} within 10 s: ${stderr.trim()}`);
}

/** Sends `signal` (after SIGCONT, in case the process is frozen) and waits for the process to exit. */
function endProcess(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGCONT');
    child.kill(signal);
  });
}

/**
 * Starts a throwaway redis-server (no persistence) on a free loopback port, for a test that
 * needs a server of its own (to stop, pause or restart it).
 * @throws Error naming what to install when redis-server is missing.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const bin = serviceBinary('redis-server');
  const port = await freePort();
  let child: ChildProcess | undefined = await launchRedis(bin, port);
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    await endProcess(running, signal);
  };
  const stop = (): Promise<void> => end('SIGTERM');
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    async restart() {
      await stop();
      child = await launchRedis(bin, port);
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
 * The path of a program, for tests: what globalSetup exported, else found now (never installed
 * from a test).
 * @throws Error naming the command that installs it when it is missing.
 */
export function serviceBinary(name: ProgramName): string {
  const found = findProgram(name);
  if (found === undefined)
    throw new Error(missingProgramsMessage([name], 'tests never install programs; npm test does, before they run'));
  return found;
}

/**
 * The URL of the Redis the tests share (set by jest's globalSetup).
 * @throws Error when it is not set: the tests were run without the globalSetup.
 */
export function testRedisUrl(): string {
  const url = process.env[REDIS_URL_VARIABLE];
  if (url === undefined || url === '')
    throw new Error(
      `${REDIS_URL_VARIABLE} is not set: jest's globalSetup (test/support/jest-global-setup.ts) sets it; run the tests with npm test or npx jest`,
    );
  return url;
}

/**
 * Checks a given FLOODGATE_REDIS_URL.
 * @throws Error naming the URL when nothing answers there.
 */
async function checkGivenRedis(url: string): Promise<void> {
  const problem = await redisProblem(url);
  if (problem !== undefined) {
    throw new Error(
      `${REDIS_URL_VARIABLE}=${url}: no Redis answers there (${problem}). Start that Redis, or unset ${REDIS_URL_VARIABLE} to let npm test start its own redis-server.`,
    );
  }
}

/** What jest's globalSetup started, for its globalTeardown (one process, one global). */
const STARTED = Symbol.for('floodgate.testServices');
type Started = { redis?: RedisServer };
const started = (): Started => ((globalThis as Record<symbol, Started>)[STARTED] ??= {});

/**
 * Jest's globalSetup: provides every program and the shared Redis, and exports their variables
 * to the tests (workers inherit this process's environment).
 * @throws Error naming what is missing and the command to run, or the given URL that does not answer.
 */
export async function provideTestServices(): Promise<void> {
  const programs = providePrograms();
  for (const name of Object.keys(programs) as ProgramName[]) process.env[PROGRAMS[name].variable] = programs[name];
  const given = process.env[REDIS_URL_VARIABLE];
  if (given !== undefined && given !== '') {
    await checkGivenRedis(given);
    return;
  }
  const redis = await startRedisServer();
  started().redis = redis;
  process.env[REDIS_URL_VARIABLE] = redis.url;
}

/** Jest's globalTeardown: stops what {@link provideTestServices} started. */
export async function stopTestServices(): Promise<void> {
  const { redis } = started();
  delete started().redis;
  await redis?.stop();
}

if (require.main === module) {
  // `npm run test:services`: the first step of npm test. Programs found or installed, a given
  // FLOODGATE_REDIS_URL checked; nothing started (jest's globalSetup starts the servers).
  (async () => {
    const programs = providePrograms();
    const given = process.env[REDIS_URL_VARIABLE];
    if (given !== undefined && given !== '') await checkGivenRedis(given);
    const redis = given ? `${REDIS_URL_VARIABLE}=${given} answers` : 'jest starts its own redis-server';
    console.log(
      `${Object.entries(programs)
        .map(([name, path]) => `${name}: ${path}`)
        .join(', ')}; Redis: ${redis}`,
    );
  })().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
