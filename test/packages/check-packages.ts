/**
 * The package checks of `npm test`: packs every workspace package as built (scripts/packages.ts)
 * and checks each tarball as a user would receive it:
 * - it carries package.json, README.md and LICENSE;
 * - every file that `main`, `types` and `exports` (every condition) name is in it;
 * - every file in its dist/ is built from a source in its src/ (nothing stale or stray);
 * - every source map (`.js.map`, `.d.ts.map`) names only sources that are in it;
 * - publint passes (strict: its warnings fail too);
 * - @arethetypeswrong/cli passes for node16 from CommonJS, node16 from ESM and bundler resolution.
 * A new package is checked as soon as it is in packages/ with an `exports` map.
 * Run: `npm run test:packages` (after `npm run build`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, filesUnder, packPackages, sourceOf, workspacePackages, type Tarball } from '../../scripts/packages';

const run = promisify(execFile);
const BIN = join(ROOT, 'node_modules', '.bin');

/** Every string leaf of an `exports` value (the files its conditions name). */
function exportTargets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(exportTargets);
  return [];
}

/** What is missing from an unpacked tarball (`dir` holds its files). */
export function contentProblems(dir: string): string[] {
  const files = new Set(filesUnder(dir));
  const problems: string[] = [];
  for (const required of ['package.json', 'README.md', 'LICENSE'])
    if (!files.has(required)) problems.push(`${required} is not packed`);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const named = [manifest.main, manifest.types, ...exportTargets(manifest.exports)].filter(
    (t): t is string => typeof t === 'string',
  );
  for (const target of named)
    if (!files.has(relative(dir, resolve(dir, target))))
      problems.push(`package.json names ${target}, which is not packed`);
  for (const file of [...files].filter((f) => f.startsWith('dist/'))) {
    const source = sourceOf(file);
    if (source === undefined || !files.has(source))
      problems.push(`${file} is packed, but no packed source builds it (a stale or stray file)`);
  }
  for (const map of [...files].filter((f) => f.endsWith('.map'))) {
    const { sources = [], sourceRoot = '' } = JSON.parse(readFileSync(join(dir, map), 'utf8')) as {
      sources?: string[];
      sourceRoot?: string;
    };
    for (const source of sources) {
      const packed = relative(dir, resolve(dir, dirname(map), sourceRoot, source));
      if (!files.has(packed)) problems.push(`${map} names its source ${source} (${packed}), which is not packed`);
    }
  }
  return problems;
}

/**
 * Runs a command (a checker, a compiler, a consumer); resolves to its output when it fails, to
 * undefined when it passes.
 */
export async function failure(
  command: string,
  args: readonly string[],
  cwd = ROOT,
  timeoutMs = 180_000,
): Promise<string | undefined> {
  try {
    await run(command, args, {
      cwd,
      env: { ...process.env, FORCE_COLOR: '0', NODE_OPTIONS: '' },
      maxBuffer: 16 * 1024 * 1024,
      timeout: timeoutMs,
    });
    return undefined;
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    return `${stdout}${stderr}`.trim() || message;
  }
}

/** Checks one tarball; resolves to its problems (empty when fit to publish). */
async function checkTarball(tarball: Tarball, unpackRoot: string): Promise<string[]> {
  const dir = join(unpackRoot, tarball.name.replace('/', '+'));
  mkdirSync(dir, { recursive: true });
  await run('tar', ['-xzf', tarball.file, '-C', dir, '--strip-components=1']);
  const problems = contentProblems(dir);
  const publint = await failure(join(BIN, 'publint'), ['run', '--strict', tarball.file]);
  if (publint !== undefined) problems.push(`publint:\n${publint}`);
  const attw = await failure(join(BIN, 'attw'), [
    '--profile',
    'node16',
    '--no-definitely-typed',
    '--format',
    'ascii',
    tarball.file,
  ]);
  if (attw !== undefined) problems.push(`@arethetypeswrong/cli:\n${attw}`);
  return problems;
}

/** Packs and checks every package, two at a time (two cores); resolves to whether all passed. */
export async function checkPackages(): Promise<boolean> {
  const work = mkdtempSync(join(tmpdir(), 'floodgate-package-checks-'));
  try {
    const tarballs = packPackages(join(work, 'tarballs'));
    const results = new Map<string, string[]>();
    const queue = [...tarballs];
    const worker = async (): Promise<void> => {
      for (let tarball = queue.shift(); tarball !== undefined; tarball = queue.shift()) {
        results.set(tarball.name, await checkTarball(tarball, join(work, 'unpacked')));
      }
    };
    await Promise.all([worker(), worker()]);
    let passed = true;
    for (const tarball of tarballs) {
      const problems = results.get(tarball.name) ?? [];
      if (problems.length === 0) {
        console.log(`ok   ${tarball.name}: contents, publint, attw (node16 CJS, node16 ESM, bundler)`);
      } else {
        passed = false;
        console.log(`FAIL ${tarball.name}:\n  ${problems.join('\n').replace(/\n/g, '\n  ')}`);
      }
    }
    return passed;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs a check of the built packages as a command: exit code 1 when they are not built, or the check fails or throws. */
export function runAsCommand(check: () => Promise<boolean>): void {
  if (workspacePackages().some((pkg) => !existsSync(join(pkg.dir, 'dist')))) {
    console.error('The packages are not built: run npm run build first.');
    process.exit(1);
  }
  check().then(
    (passed) => {
      if (!passed) process.exitCode = 1;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}

if (require.main === module) runAsCommand(checkPackages);
