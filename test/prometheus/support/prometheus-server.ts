import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, serviceBinary } from '../../support/test-services';

/** The longest a test waits for Prometheus to start, or for a query to show what it expects. */
const PATIENCE_MS = 30_000;
const POLL_MS = 100;

/** A prometheus server this test file started, scraping given targets every second. */
export interface PrometheusServer {
  /** Its HTTP API, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Runs a PromQL instant query; the vector's samples, by their labels. */
  query(promql: string): Promise<QuerySample[]>;
  /**
   * Polls `promql` until `accept` takes its answer, or fails after 30 s naming the query and
   * the last answer (Prometheus scrapes once a second; no fixed sleep).
   */
  waitFor(promql: string, accept: (samples: QuerySample[]) => boolean): Promise<QuerySample[]>;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and removes its data. */
  stop(): Promise<void>;
}

/** One sample of an instant vector. */
export interface QuerySample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * Starts a throwaway prometheus server on a free loopback port, with a temporary configuration
 * and data directory, scraping `targets` (`host:port`, path `/metrics`) every second as job
 * `floodgate`. Resolves once it answers `/-/ready`.
 * @throws Error naming the command that installs prometheus when it is missing (`npm test`
 *   provides it, as `FLOODGATE_PROMETHEUS_BIN`): never a silent skip.
 */
export async function startPrometheus(targets: readonly string[]): Promise<PrometheusServer> {
  const bin = serviceBinary('prometheus');
  const dir = await mkdtemp(join(tmpdir(), 'floodgate-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 900ms',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: floodgate',
      '    metrics_path: /metrics',
      '    static_configs:',
      `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    bin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (): Promise<void> => {
    await terminate(child, exited);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await untilReady(url, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  const query = async (promql: string): Promise<QuerySample[]> => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success' || body.data?.resultType !== 'vector')
      throw new Error(`Prometheus answered ${JSON.stringify(body)} to ${promql}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  return {
    url,
    query,
    async waitFor(promql, accept) {
      const deadline = Date.now() + PATIENCE_MS;
      for (;;) {
        const last = await query(promql);
        if (accept(last)) return last;
        if (Date.now() > deadline)
          throw new Error(
            `Prometheus did not show what was expected within ${PATIENCE_MS} ms for ${promql}; last answer: ${JSON.stringify(last)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    stop,
  };
}

async function untilReady(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with code ${child.exitCode}: ${stderr()}`);
    try {
      if ((await fetch(`${url}/-/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`prometheus did not become ready on ${url} within ${PATIENCE_MS} ms: ${stderr()}`);
}

async function terminate(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}
