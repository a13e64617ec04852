import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { T0 } from './support/cluster-fixture';
import { testRedisUrl } from '../support/test-services';

const ROOT = join(__dirname, '..', '..');
const WORKER = join(__dirname, 'support', 'cluster-worker.ts');

const redisUrl = testRedisUrl();


interface Worker {
  readonly child: ChildProcess;
  readonly lines: AsyncIterator<string>;
}

function startWorker(env: Record<string, string>): Worker {
  const child = spawn(process.execPath, ['--conditions=@floodgate/source', '--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  async function* lines(): AsyncGenerator<string> {
    let buffer = '';
    for await (const chunk of child.stdout!) {
      buffer += String(chunk);
      let i: number;
      while ((i = buffer.indexOf('\n')) >= 0) {
        yield buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
      }
    }
  }
  return { child, lines: lines() };
}

async function nextLine(worker: Worker): Promise<string> {
  const { value, done } = await worker.lines.next();
  if (done) throw new Error(`worker exited with code ${worker.child.exitCode}`);
  return value;
}

describe('redisCluster across processes', () => {
  it('lets two processes pass exactly the threshold between them', async () => {
    const env = { FG_REDIS_URL: redisUrl, FG_PREFIX: `fg-test:processes:${process.pid}`, FG_NOW: String(T0), FG_THRESHOLD: '7', FG_CALLS: '10' };
    const workers = [startWorker(env), startWorker(env)];
    try {
      for (const worker of workers) expect(await nextLine(worker)).toBe('ready');
      for (const worker of workers) worker.child.stdin!.write('go\n');
      const results = await Promise.all(workers.map(async (worker) => JSON.parse(await nextLine(worker)) as { passed: number }));
      expect(results[0]!.passed + results[1]!.passed).toBe(7);
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill();
    }
  }, 30_000);
});
