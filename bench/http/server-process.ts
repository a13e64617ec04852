import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pinnedCommand } from '../lib/pinned-command';
import type { Framework, HttpVariant } from './http-variant';

/** A running server-worker process, or why the variant cannot run yet. */
export type ServerProcess =
  | { readonly kind: 'running'; readonly port: number; readonly pid: number; stop(): Promise<void> }
  | { readonly kind: 'pending'; readonly why: string };

/** Starts `server-worker.js <framework> <variant>` pinned to `core` and waits for its port. */
export function startServerProcess(script: string, framework: Framework, variant: HttpVariant, core: number): Promise<ServerProcess> {
  const { file, args } = pinnedCommand(core, [script, framework, variant]);
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise<ServerProcess>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (why: string): void => {
      child.kill('SIGKILL');
      reject(new Error(`${framework}/${variant} server: ${why}`));
    };
    const timer = setTimeout(() => fail('did not start within 20 s'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${framework}/${variant} server exited with code ${String(code)} before listening`));
    });
    lines.once('line', (line) => {
      clearTimeout(timer);
      let message: { port?: number; pending?: string };
      try {
        message = JSON.parse(line) as { port?: number; pending?: string };
      } catch {
        fail(`printed ${line}`);
        return;
      }
      child.removeAllListeners('exit');
      if (message.pending !== undefined) {
        resolve({ kind: 'pending', why: message.pending });
        return;
      }
      resolve({ kind: 'running', port: message.port!, pid: child.pid!, stop: () => stop(child) });
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
