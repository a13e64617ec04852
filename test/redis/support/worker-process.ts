import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** A TypeScript worker in a process of its own, talked to in lines over stdin/stdout. */
export class WorkerProcess {
  readonly child: ChildProcess;
  private readonly lines: AsyncIterator<string>;

  /** Runs `script` (a path under test/redis/support) with `env` added to this process's. */
  constructor(script: string, env: Record<string, string>) {
    this.child = spawn(
      process.execPath,
      ['--conditions=@floodgate/source', '--import', 'tsx', join(__dirname, script)],
      {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const stdout = this.child.stdout!;
    this.lines = (async function* lines(): AsyncGenerator<string> {
      let buffer = '';
      for await (const chunk of stdout) {
        buffer += String(chunk);
        let i: number;
        while ((i = buffer.indexOf('\n')) >= 0) {
          yield buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
        }
      }
    })();
  }

  /** The next line the worker prints. */
  async nextLine(): Promise<string> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`worker exited with code ${this.child.exitCode}`);
    return value;
  }

  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  /** Sends `line` and parses the JSON line the worker answers. */
  async request<T>(line: string): Promise<T> {
    this.send(line);
    return JSON.parse(await this.nextLine()) as T;
  }

  /** Kills the worker if it still runs. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }
}
