/**
 * One process of the HTTP instruction count: starts the HTTP suite's server of one framework and
 * variant (the same apps as `npm run bench`), and drives it from this process with a keep-alive
 * `node:http` client (one socket, one request at a time, the suite's 100 users in turn), then
 * exits. Run under callgrind by instruction-suite.ts twice with different request counts: the
 * difference over the difference of requests is one request's instructions, the server's and the
 * client's (the client's are the same in every variant, so a difference between variants is the
 * server's). After its warm-up it says `warm` on stdout and waits for `SIGUSR2` before the
 * counted requests (see instruction-runs.ts).
 *
 * Run by instruction-suite.ts (instruction-runs.ts gives its flags); by hand, it waits after
 * `warm` for `kill -USR2 <pid>`:
 *   node bench/dist/instructions/http-instruction-case.js <framework> <variant> <requests>
 */
import { writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import {
  HELLO_PATH,
  isBlockedVariant,
  USER_COUNT,
  USER_HEADER,
  type Framework,
  type HttpVariant,
} from '../http/http-variant';
import { startServer } from '../http/start-server';
import { steppingClock } from './stepping-clock';

/** Requests before the counted ones, in two calls of {@link drive}: V8 is still compiling the HTTP path after 5,000. */
const WARM_REQUESTS = 10_000;

/**
 * Sends `total` GETs, one at a time on one socket (so each takes the same turns of the event
 * loop); rejects on a status the variant should not answer.
 */
export function drive(port: number, agent: Agent, total: number, status: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (total === 0) return resolve();
    let sent = 0;
    const send = (): void => {
      const user = `user-${sent++ % USER_COUNT}`;
      const req = request({ agent, host: '127.0.0.1', port, path: HELLO_PATH, headers: { [USER_HEADER]: user } });
      req.on('response', (res) => {
        res.resume();
        if (res.statusCode !== status)
          reject(new Error(`${HELLO_PATH} answered ${String(res.statusCode)}, not ${status}`));
        else res.on('end', () => (sent < total ? send() : resolve()));
      });
      req.on('error', reject);
      req.end();
    };
    send();
  });
}

/**
 * Says `warm` and waits for the counter's word (`SIGUSR2`) that it counts from now. Written to
 * the descriptor and told by a signal, not through `process.stdout` and `process.stdin`: those
 * are streams made on first use, whose new shapes would deoptimize the stream code the HTTP path
 * shares, to be compiled again in the counted requests.
 */
function counting(): Promise<void> {
  const told = new Promise<void>((resolve) => process.once('SIGUSR2', () => resolve()));
  writeSync(1, 'warm\n');
  return told;
}

/**
 * Serves `framework`'s `variant` (its Floodgate engines on the stepping clock: see
 * stepping-clock.ts) and sends it `warm` requests, then, once `counting` resolves, `requests`
 * more; resolves when they are answered and the server is closed.
 * @throws Error when a request is answered with another status than the variant's (200, or 429 when blocked).
 */
export async function runHttpCase(
  framework: Framework,
  variant: HttpVariant,
  warm: number,
  requests: number,
  counting: () => Promise<void>,
): Promise<void> {
  const { server, port } = await startServer(framework, variant, steppingClock());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const status = isBlockedVariant(variant) ? 429 : 200;
    // In two calls: the second call of `drive` deoptimizes much of the HTTP path (V8 had
    // specialized it to the first call's closures), and that must not fall in the counted one.
    await drive(port, agent, Math.ceil(warm / 2), status);
    await drive(port, agent, Math.floor(warm / 2), status);
    await counting();
    await drive(port, agent, requests, status);
  } finally {
    agent.destroy();
    server.closeAllConnections?.();
    server.close();
  }
}

if (require.main === module) {
  const [framework, variant, requests] = process.argv.slice(2) as [Framework, HttpVariant, string];
  if (!(Number(requests) >= 0)) {
    console.error('usage: http-instruction-case <framework> <variant> <requests>');
    process.exit(1);
  }
  runHttpCase(framework, variant, WARM_REQUESTS, Number(requests), counting).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
