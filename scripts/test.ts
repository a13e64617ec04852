/**
 * `npm test`: a short sequence of named steps, each an npm script, run in order. It stops at the
 * first step that fails and ends with each step's time and a closing `tests: N passed, M failed`
 * line (jest's count). To add a step (lint, a dependency-rule check, an API report, coverage),
 * add its npm script and a line to {@link STEPS}. `npm test -- jest packages` runs only the steps
 * named.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** One step: its name, its npm script (with `args`), and what it does (printed as it starts). */
interface Step {
  readonly name: string;
  readonly script: string;
  readonly args?: readonly string[];
  readonly what: string;
}

/** The steps of `npm test`, in order. */
const STEPS: readonly Step[] = [
  {
    name: 'services',
    script: 'test:services',
    what: 'redis-server, prometheus and chromium found, or installed; a given FLOODGATE_REDIS_URL answers',
  },
  { name: 'typecheck', script: 'typecheck', what: 'tsc over the packages, tests, examples, bench and scripts' },
  { name: 'lint', script: 'lint', what: 'eslint, and prettier --check (npm run format applies it)' },
  { name: 'deps', script: 'deps', what: 'the layering of the packages (dependency-cruiser)' },
  { name: 'build', script: 'build', what: "tsc -b, then each package's ES module wrappers and LICENSE" },
  { name: 'api', script: 'api', what: "core's public API against packages/core/api (API Extractor)" },
  {
    name: 'jest',
    script: 'test:jest',
    args: ['--coverage'],
    what: "every test, on the packages' sources, with a redis-server of its own; coverage",
  },
  { name: 'packages', script: 'test:packages', what: 'each packed tarball: contents, source maps, publint, attw' },
  {
    name: 'imports',
    script: 'test:imports',
    what: 'the import matrix: {CommonJS, ES module} x {JavaScript, TypeScript node16, nodenext, bundler}',
  },
];

/** Runs `npm run <script> [-- args]` with the terminal; resolves to its exit code. */
function npmRun(script: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])], {
      stdio: 'inherit',
    });
    child.once('error', () => resolve(1));
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !STEPS.some((s) => s.name === name));
  if (unknown.length > 0) {
    console.error(`npm test: no step ${unknown.join(', ')}; the steps are ${STEPS.map((s) => s.name).join(', ')}`);
    return 1;
  }
  const steps = wanted.length === 0 ? STEPS : STEPS.filter((s) => wanted.includes(s.name));
  const work = mkdtempSync(join(tmpdir(), 'floodgate-npm-test-'));
  const jestResults = join(work, 'jest-results.json');
  const timings: string[] = [];
  const started = performance.now();
  let failed: Step | undefined;
  try {
    for (const [i, step] of steps.entries()) {
      console.log(`\n== npm test ${i + 1}/${steps.length}: ${step.name} (npm run ${step.script}): ${step.what}`);
      const stepStarted = performance.now();
      const args = [
        ...(step.args ?? []),
        ...(step.script === 'test:jest' ? ['--json', `--outputFile=${jestResults}`] : []),
      ];
      const code = await npmRun(step.script, args);
      timings.push(
        `  ${step.name.padEnd(10)} ${seconds(performance.now() - stepStarted).padStart(7)}${code === 0 ? '' : `  FAILED (exit code ${code})`}`,
      );
      if (code !== 0) {
        failed = step;
        break;
      }
    }
    const notRun = failed === undefined ? [] : steps.slice(steps.indexOf(failed) + 1).map((s) => s.name);
    console.log(
      `\nnpm test: ${failed === undefined ? 'every step passed' : `step ${failed.name} failed`} in ${seconds(performance.now() - started)}`,
    );
    console.log(timings.join('\n'));
    if (notRun.length > 0) console.log(`  not run: ${notRun.join(', ')}`);
    if (existsSync(jestResults)) {
      const { numPassedTests, numFailedTests } = JSON.parse(readFileSync(jestResults, 'utf8')) as {
        numPassedTests: number;
        numFailedTests: number;
      };
      console.log(`tests: ${numPassedTests} passed, ${numFailedTests} failed`);
    }
    return failed === undefined ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
