/**
 * How a counted case runs under callgrind: which script, with which arguments, and with how many
 * calls in the two processes whose difference is the cost of the calls. Core cases
 * (instruction-cases.ts) make 100,000 and 400,000 calls, counted from the start; HTTP cases
 * (`http.<framework>.<variant>`, http-instruction-case.ts) 1,000 and 5,000 requests, as one
 * request costs about a hundred times a call, counted from the end of their warm-up, which
 * valgrind runs uninstrumented (several times faster: V8 is still compiling the HTTP path after
 * thousands of requests, and that compiling would be counted as the requests' cost). A compile
 * left in the counted requests costs millions of instructions, so the windows are long: spread
 * over 4,000 requests, the few that remain weigh a quarter of what they would over 1,000.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { FRAMEWORKS, HTTP_VARIANTS, type Framework, type HttpVariant } from '../http/http-variant';
import { INSTRUCTION_CASES } from './instruction-cases';

/** V8 single-threaded and predictable, with fixed seeds: a core count repeats to within a few instructions a call. */
export const NODE_FLAGS: readonly string[] = ['--single-threaded', '--predictable', '--hash-seed=1', '--random-seed=1'];

/** The HTTP cases, `http.<framework>.<variant>`, with their labels. */
export const HTTP_INSTRUCTION_CASES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    FRAMEWORKS.flatMap((framework) =>
      HTTP_VARIANTS.map((variant) => [
        `http.${framework}.${variant}`,
        `one ${variant} GET on ${framework}, server and keep-alive client`,
      ]),
    ),
  ),
);

/** Every case, core and HTTP, with its label. */
export const ALL_CASES: Readonly<Record<string, string>> = Object.freeze({
  ...INSTRUCTION_CASES,
  ...HTTP_INSTRUCTION_CASES,
});

/** One case's two processes. */
export interface CaseRun {
  readonly fewer: number;
  readonly more: number;
  /** The node arguments (after the flags) of the process making `calls` calls. */
  args(calls: number): string[];
  /**
   * Whether the process says `warm` on stdout at the end of its warm-up and waits for `SIGUSR2`:
   * it runs uninstrumented until then (see {@link runCounted}).
   */
  readonly warmsUp: boolean;
  /** Node flags of its own, after {@link NODE_FLAGS}. */
  readonly nodeFlags: readonly string[];
}

/**
 * The run of case `id`; `coreIndex`, another build's `@floodgate/core` (core cases only).
 * @throws Error naming the case when it is none of {@link ALL_CASES}, or when an HTTP case is given another build.
 */
export function caseRun(id: string, coreIndex?: string): CaseRun {
  if (id in INSTRUCTION_CASES) {
    return {
      fewer: 100_000,
      more: 400_000,
      warmsUp: false,
      nodeFlags: [],
      args: (calls) => [
        join(__dirname, 'instruction-cases.js'),
        id,
        String(calls),
        ...(coreIndex === undefined ? [] : [coreIndex]),
      ],
    };
  }
  if (id in HTTP_INSTRUCTION_CASES) {
    if (coreIndex !== undefined) throw new Error(`${id}: --against counts core cases only`);
    const [, framework, variant] = id.split('.') as [string, Framework, HttpVariant];
    return {
      fewer: 1000,
      more: 5000,
      warmsUp: true,
      // Heap growth fixed, not paced by the allocation rate V8 times.
      nodeFlags: ['--predictable-gc-schedule'],
      args: (calls) => [join(__dirname, 'http-instruction-case.js'), framework, variant, String(calls)],
    };
  }
  throw new Error(`unknown case ${id}; known: ${Object.keys(ALL_CASES).join(', ')}`);
}

/** What a counted process left. */
export interface CountedRun {
  /** Instructions collected (callgrind's `Collected`). */
  readonly instructions: number;
  /** The pid of the process valgrind ran (node's own). */
  readonly pid: number;
}

/**
 * Runs `run` with `calls` calls under callgrind, with `nodeFlags` after the case's own and
 * `valgrindArgs` among valgrind's; a case that warms up is instrumented from its `warm`.
 * @throws Error naming the case when valgrind is missing or the process fails.
 */
export function runCounted(
  id: string,
  run: CaseRun,
  calls: number,
  valgrindArgs: readonly string[],
  nodeFlags: readonly string[] = [],
): Promise<CountedRun> {
  const args = [
    '--tool=callgrind',
    ...valgrindArgs,
    ...(run.warmsUp ? ['--instr-atstart=no'] : []),
    // V8 writes the code it runs: valgrind must see code written anywhere but in a file.
    '--smc-check=all-non-file',
    process.execPath,
    ...NODE_FLAGS,
    ...run.nodeFlags,
    ...nodeFlags,
    ...run.args(calls),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let partial = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (!run.warmsUp) return;
      // Whole lines only: a chunk may end inside one.
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      if (lines.includes('warm')) {
        execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
        child.kill('SIGUSR2');
      }
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error('valgrind was not found: install it (Debian: apt-get install valgrind) to count instructions')
          : error,
      ),
    );
    child.on('close', (code) => {
      const collected = /Collected : (\d+)/.exec(stderr);
      if (code !== 0 || collected === null)
        reject(new Error(`${id} (${calls} calls) failed (exit ${String(code)}):\n${stderr.slice(-2000)}`));
      else resolve({ instructions: Number(collected[1]), pid: child.pid! });
    });
  });
}
