/**
 * The package checks of `npm test`: packs every workspace package as built (scripts/packages.ts)
 * and checks each tarball as a user would receive it:
 * - it carries package.json, README.md and LICENSE;
 * - every file that `main`, `types` and `exports` (every condition) name is in it;
 * - every source map (`.js.map`, `.d.ts.map`) names only sources that are in it;
 * - publint passes (strict: its warnings fail too);
 * - @arethetypeswrong/cli passes for node16 from CommonJS, node16 from ESM and bundler resolution.
 * A new package is checked as soon as it is in packages/ with an `exports` map.
 * Run: `npm run test:packages` (after `npm run build`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, packPackages, type Tarball } from '../../scripts/packages';

const run = promisify(execFile);
const BIN = join(ROOT, 'node_modules', '.bin');

/** Every file under `dir`, relative to it, with `/` separators. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

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
  for (const required of ['package.json', 'README.md', 'LICENSE']) if (!files.has(required)) problems.push(`${required} is not packed`);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const named = [manifest.main, manifest.types, ...exportTargets(manifest.exports)].filter((t): t is string => typeof t === 'string');
  for (const target of named) if (!files.has(relative(dir, resolve(dir, target)))) problems.push(`package.json names ${target}, which is not packed`);
  for (const map of [...files].filter((f) => f.endsWith('.map'))) {
    const { sources = [], sourceRoot = '' } = JSON.parse(readFileSync(join(dir, map), 'utf8')) as { sources?: string[]; sourceRoot?: string };
    for (const source of sources) {
      const packed = relative(dir, resolve(dir, dirname(map), sourceRoot, source));
      if (!files.has(packed)) problems.push(`${map} names its source ${source} (${packed}), which is not packed`);
    }
  }
  return problems;
}

/** Runs a checker; resolves to its output when it fails, to undefined when it passes. */
async function failure(command: string, args: string[]): Promise<string | undefined> {
  try {
    await run(command, args, { cwd: ROOT, env: { ...process.env, FORCE_COLOR: '0' }, maxBuffer: 16 * 1024 * 1024 });
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
  const attw = await failure(join(BIN, 'attw'), ['--profile', 'node16', '--no-definitely-typed', '--format', 'ascii', tarball.file]);
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

if (require.main === module) {
  if (!existsSync(join(ROOT, 'packages', 'core', 'dist'))) {
    console.error('The packages are not built: run npm run build first.');
    process.exit(1);
  }
  checkPackages().then(
    (passed) => {
      if (!passed) process.exitCode = 1;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
