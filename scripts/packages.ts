/**
 * The workspace packages as they are published. A package lists its entry points once, in its
 * package.json `exports`: each subpath's `@floodgate/source` condition names its source file
 * (`"./http": { "@floodgate/source": "./src/http/index.ts" }`). Everything else follows:
 * - the rest of each `exports` entry: `import` → an ES module wrapper (`dist/<entry>.mjs`,
 *   types `dist/<entry>.d.mts`), `require` → tsc's CommonJS (`dist/<entry>.js`, `.d.ts`);
 * - the wrappers themselves, written after `tsc -b` (`build`): each re-exports the CommonJS
 *   module's named exports (and its `default`), so there is one instance of every module
 *   whichever way it is loaded (no dual-package hazard: one engine, one `instanceof`);
 * - `LICENSE`, copied from the repository's root into each package (git ignores the copies);
 * - no stale outputs: what `tsc -b` left in dist/ for a source that is gone is removed;
 * - the tarballs (`npm pack`) that the package checks and the import matrix use.
 * The source ships too (`files: ["dist", "src"]`): the source maps and declaration maps point at
 * it, and so does the `@floodgate/source` condition, which the examples, the demo and the bench
 * use (through `--conditions=@floodgate/source`) to run the packages from source without a build.
 *
 * Run: `tsx scripts/packages.ts build` (part of `npm run build`, after `tsc -b`);
 * `tsx scripts/packages.ts fix` writes the canonical `type`, `main`, `types`, `exports` and `files` into
 * every package.json (after adding a package or an entry point).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository's root. */
export const ROOT = join(__dirname, '..');

/** The condition that maps an entry point to its TypeScript source. */
export const SOURCE_CONDITION = '@floodgate/source';

/** One entry point of a package: `@floodgate/core/http` is `{ subpath: './http', source: 'src/http/index.ts', base: 'dist/http/index' }`. */
export interface EntryPoint {
  /** The key in `exports`: `'.'` or `'./name'`. */
  readonly subpath: string;
  /** The source file, relative to the package. */
  readonly source: string;
  /** The built files without their extension (`.js`, `.d.ts`, `.mjs`, `.d.mts`), relative to the package. */
  readonly base: string;
}

/** A workspace package: where it is, its manifest, its entry points. */
export interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  readonly manifest: Record<string, unknown>;
  readonly entryPoints: readonly EntryPoint[];
}

/** A package's `package.json`, parsed. */
function readManifest(dir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
}

/**
 * The entry points a manifest lists: every `exports` key but `./package.json`, each with a
 * `@floodgate/source` condition (or a plain string) naming `./src/<path>.ts`.
 * @throws Error naming the package and subpath when an entry does not name its source that way.
 */
export function entryPointsOf(name: string, manifest: Record<string, unknown>): EntryPoint[] {
  // Never a local named `exports`: compiled to CommonJS, it would shadow the module's own.
  const exportMap = manifest.exports;
  if (typeof exportMap !== 'object' || exportMap === null)
    throw new Error(`${name}: package.json needs an "exports" map listing its entry points`);
  const entries: EntryPoint[] = [];
  for (const [subpath, target] of Object.entries(exportMap)) {
    if (subpath === './package.json') continue;
    const source = typeof target === 'string' ? target : (target as Record<string, unknown>)[SOURCE_CONDITION];
    const match = typeof source === 'string' ? /^\.\/src\/(.+)\.ts$/.exec(source) : null;
    if (match === null) {
      throw new Error(
        `${name}: exports["${subpath}"] must name its source file, as { "${SOURCE_CONDITION}": "./src/<path>.ts" }, got ${JSON.stringify(target)}`,
      );
    }
    entries.push({ subpath, source: `src/${match[1]}.ts`, base: `dist/${match[1]}` });
  }
  if (entries.length === 0) throw new Error(`${name}: package.json "exports" lists no entry point`);
  return entries;
}

/** Every package of the workspace (`packages/*`), in directory order. */
export function workspacePackages(): WorkspacePackage[] {
  const dirs = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(ROOT, 'packages', d.name, 'package.json')))
    .map((d) => join(ROOT, 'packages', d.name))
    .sort();
  return dirs.map((dir) => {
    const manifest = readManifest(dir);
    const name = String(manifest.name);
    return { name, dir, manifest, entryPoints: entryPointsOf(name, manifest) };
  });
}

/**
 * The `type`, `main`, `types`, `exports` and `files` a package with these entry points must have;
 * `files` keeps whatever else the manifest packs (a dashboard's assets).
 */
export function canonicalFields(
  entryPoints: readonly EntryPoint[],
  manifest: Record<string, unknown> = {},
): Record<string, unknown> {
  const exportMap: Record<string, unknown> = {};
  for (const e of entryPoints) {
    exportMap[e.subpath] = {
      [SOURCE_CONDITION]: `./${e.source}`,
      import: { types: `./${e.base}.d.mts`, default: `./${e.base}.mjs` },
      require: { types: `./${e.base}.d.ts`, default: `./${e.base}.js` },
    };
  }
  exportMap['./package.json'] = './package.json';
  const root = entryPoints.find((e) => e.subpath === '.');
  return {
    type: 'commonjs',
    ...(root ? { main: `./${root.base}.js`, types: `./${root.base}.d.ts` } : {}),
    exports: exportMap,
    files: [...new Set(['dist', 'src', ...(Array.isArray(manifest.files) ? (manifest.files as string[]) : [])])],
  };
}

/** What is wrong with a package's manifest or folder; empty when it is fit to pack. */
export function manifestProblems(pkg: WorkspacePackage): string[] {
  const problems: string[] = [];
  for (const [field, expected] of Object.entries(canonicalFields(pkg.entryPoints, pkg.manifest))) {
    if (JSON.stringify(pkg.manifest[field]) !== JSON.stringify(expected)) {
      problems.push(
        `${pkg.name}: package.json "${field}" should be ${JSON.stringify(expected)} (run: npx tsx scripts/packages.ts fix)`,
      );
    }
  }
  if (!existsSync(join(pkg.dir, 'README.md')))
    problems.push(
      `${pkg.name}: ${relative(ROOT, pkg.dir)}/README.md is missing (what the package is, how to install and import it)`,
    );
  return problems;
}

/** Rewrites each manifest's canonical fields in place, keeping every other field and the order. */
function fixManifests(): void {
  for (const pkg of workspacePackages()) {
    const fields = canonicalFields(pkg.entryPoints, pkg.manifest);
    const manifest: Record<string, unknown> = { ...pkg.manifest };
    for (const [field, value] of Object.entries(fields)) manifest[field] = value;
    writeFileSync(join(pkg.dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(`${pkg.name}: package.json written`);
  }
}

/**
 * Writes the ES module face of one built entry point: `<base>.mjs` re-exports the names the
 * CommonJS module exports (read by loading it) and its `default`; `<base>.d.mts` re-exports its
 * types. A default export must also be exported by name (`export { x as default }`): the types
 * re-export it by that name, since the meaning of a default import of CommonJS types differs
 * between TypeScript's `node16` and `bundler` resolution.
 * @throws Error when the entry point is not built, or its default export has no name.
 */
export function writeEsmWrapper(pkg: WorkspacePackage, entry: EntryPoint): void {
  const cjsFile = join(pkg.dir, `${entry.base}.js`);
  if (!existsSync(cjsFile)) throw new Error(`${pkg.name}: ${relative(ROOT, cjsFile)} is missing: run tsc -b first`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loads the built CommonJS module to list its exports
  const moduleExports = require(cjsFile) as Record<string, unknown>;
  const names = Object.keys(moduleExports).filter((n) => n !== 'default' && n !== '__esModule');
  const file = entry.base.slice(entry.base.lastIndexOf('/') + 1);
  const header = `// Generated by scripts/packages.ts: the ES module face of ./${file}.js (one instance of the module, whichever way it is loaded).\n`;
  let js = `${header}import cjs from './${file}.js';\n`;
  if (names.length > 0) js += `export const {\n${names.map((n) => `  ${n},\n`).join('')}} = cjs;\n`;
  let dts = `${header}export * from './${file}.js';\n`;
  if ('default' in moduleExports) {
    const alias = names.find((n) => moduleExports[n] === moduleExports.default);
    if (alias === undefined)
      throw new Error(
        `${pkg.name} (${entry.subpath}): the default export must also be exported by name (export { x as default })`,
      );
    js += 'export default cjs.default;\n';
    dts += `export { ${alias} as default } from './${file}.js';\n`;
  }
  writeFileSync(join(pkg.dir, `${entry.base}.mjs`), js);
  writeFileSync(join(pkg.dir, `${entry.base}.d.mts`), dts);
}

/** What the build writes into dist/ for each source file `src/<x>.ts`: `dist/<x>` and one of these. */
const BUILT_EXTENSIONS = ['.d.ts.map', '.js.map', '.d.mts', '.d.ts', '.mjs', '.js'];

/** The source file a file in dist/ is built from (`dist/http/index.d.ts` → `src/http/index.ts`), if it is a build output. */
export function sourceOf(distFile: string): string | undefined {
  const extension = BUILT_EXTENSIONS.find((e) => distFile.endsWith(e));
  return distFile.startsWith('dist/') && extension !== undefined
    ? `src/${distFile.slice(5, -extension.length)}.ts`
    : undefined;
}

/** Every file under `dir`, relative to it, with `/` separators. */
export function filesUnder(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/**
 * Removes from dist/ what no source builds any more (`tsc -b` leaves the outputs of a deleted or
 * moved source behind), so a tarball never ships them.
 */
function pruneStaleOutputs(pkg: WorkspacePackage): string[] {
  const stale = filesUnder(join(pkg.dir, 'dist'), 'dist/').filter((file) => {
    const source = sourceOf(file);
    return source === undefined || !existsSync(join(pkg.dir, source));
  });
  for (const file of stale) rmSync(join(pkg.dir, file));
  const removeEmpty = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) removeEmpty(join(dir, entry.name));
    if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
  };
  if (stale.length > 0) removeEmpty(join(pkg.dir, 'dist'));
  return stale;
}

/**
 * After `tsc -b`: checks every manifest, prunes stale outputs, writes the ES module wrappers and
 * copies LICENSE.
 * @throws Error listing every manifest problem.
 */
export function buildPackages(): WorkspacePackage[] {
  const packages = workspacePackages();
  const problems = packages.flatMap(manifestProblems);
  if (problems.length > 0) throw new Error(`Packages not fit to publish:\n  ${problems.join('\n  ')}`);
  for (const pkg of packages) {
    const stale = pruneStaleOutputs(pkg);
    if (stale.length > 0)
      console.log(
        `${pkg.name}: removed ${stale.length} stale files from dist/ (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''})`,
      );
    for (const entry of pkg.entryPoints) writeEsmWrapper(pkg, entry);
    copyFileSync(join(ROOT, 'LICENSE'), join(pkg.dir, 'LICENSE'));
  }
  return packages;
}

/** A packed package: its name and tarball. */
export interface Tarball {
  readonly name: string;
  readonly file: string;
}

/** Packs every workspace package (as built) into `destination`; returns the tarballs. */
export function packPackages(destination: string): Tarball[] {
  mkdirSync(destination, { recursive: true });
  const output = execFileSync('npm', ['pack', '--workspaces', '--json', '--pack-destination', destination], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const packed = JSON.parse(output) as { name: string; filename: string }[];
  return packed.map((p) => ({ name: p.name, file: join(destination, p.filename) }));
}

if (require.main === module) {
  const command = process.argv[2];
  try {
    if (command === 'build') {
      const packages = buildPackages();
      console.log(
        `ES module wrappers and LICENSE written for ${packages.map((p) => `${p.name} (${p.entryPoints.map((e) => e.subpath).join(', ')})`).join(', ')}`,
      );
    } else if (command === 'fix') {
      fixManifests();
    } else {
      throw new Error('usage: tsx scripts/packages.ts build | fix');
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}
