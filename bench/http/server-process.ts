import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pinProcess } from '../lib/pinned-command';
import type { Framework, HttpVariant } from './http-variant';

/** A running server-worker process. */
export interface ServerProcess {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `server-worker.js <framework> <variant>`, waits for its port, then pins it to `core`
 * (after start-up, so several servers start in parallel on every core).
 */
export function startServerProcess(
  script: string,
  framework: Framework,
  variant: HttpVariant,
  core: number,
): Promise<ServerProcess> {
  return startListeningProcess(script, [framework, variant], core);
}

/**
 * Starts `node script ...args`, waits for the `{"port":N}` line it prints once listening, then
 * pins it to `core`.
 */
export function startListeningProcess(script: string, args: readonly string[], core: number): Promise<ServerProcess> {
  const name = args.join('/');
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise<ServerProcess>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (why: string): void => {
      child.kill('SIGKILL');
      reject(new Error(`${name} server: ${why}`));
    };
    const timer = setTimeout(() => fail('did not start within 20 s'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited with code ${String(code)} before listening`));
    });
    lines.once('line', (line) => {
      clearTimeout(timer);
      let port: number | undefined;
      try {
        port = (JSON.parse(line) as { port?: number }).port;
      } catch {
        // reported below
      }
      if (port === undefined) {
        fail(`printed ${line}`);
        return;
      }
      child.removeAllListeners('exit');
      pinProcess(child.pid!, core);
      resolve({ port, pid: child.pid!, stop: () => stop(child) });
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
