import { execFile } from 'node:child_process';
import { pinnedCommand } from './pinned-command';

/** Options of {@link runJsonWorker}. */
export interface JsonWorkerOptions {
  /** The core to pin the worker to (when taskset exists). */
  readonly core: number;
  /** Flags for node itself, such as `--expose-gc`. @defaultValue none */
  readonly nodeFlags?: readonly string[];
  /** Kill the worker after this long. @defaultValue 300000 */
  readonly timeoutMs?: number;
}

/**
 * Runs a compiled bench worker in a fresh node process and returns the JSON object it prints
 * as the last line of its stdout. Its stderr passes through (progress, warnings).
 */
export function runJsonWorker<T>(script: string, args: readonly string[], options: JsonWorkerOptions): Promise<T> {
  const { file, args: argv } = pinnedCommand(options.core, [...(options.nodeFlags ?? []), script, ...args]);
  return new Promise<T>((resolve, reject) => {
    const child = execFile(
      file,
      argv,
      { maxBuffer: 64 * 1024 * 1024, timeout: options.timeoutMs ?? 300_000 },
      (error, stdout) => {
        if (error) {
          reject(new Error(`${script} ${args.join(' ')} failed: ${error.message}`));
          return;
        }
        const lines = stdout.trim().split('\n');
        try {
          resolve(JSON.parse(lines[lines.length - 1]!) as T);
        } catch {
          reject(new Error(`${script} ${args.join(' ')} printed no JSON result:\n${stdout.slice(-2000)}`));
        }
      },
    );
    child.stderr?.pipe(process.stderr);
  });
}
