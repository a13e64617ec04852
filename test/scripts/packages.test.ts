import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  canonicalFields,
  entryPointsOf,
  manifestProblems,
  sourceOf,
  workspacePackages,
  writeEsmWrapper,
  type WorkspacePackage,
} from '../../scripts/packages';

/** A package in a temp dir whose built entry point is `cjs` (CommonJS source text). */
function builtPackage(cjs: string): WorkspacePackage {
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-packages-test-'));
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'dist', 'index.js'), cjs);
  const manifest = { name: '@floodgate/example', exports: { '.': { '@floodgate/source': './src/index.ts' } } };
  return { name: manifest.name, dir, manifest, entryPoints: entryPointsOf(manifest.name, manifest) };
}

describe('scripts/packages', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  const track = (pkg: WorkspacePackage): WorkspacePackage => {
    made.push(pkg.dir);
    return pkg;
  };

  it("reads core's seven entry points from its exports map", () => {
    const core = workspacePackages().find((p) => p.name === '@floodgate/core')!;
    expect(core.entryPoints).toEqual([
      { subpath: '.', source: 'src/index.ts', base: 'dist/index' },
      { subpath: './rules', source: 'src/rules/index.ts', base: 'dist/rules/index' },
      { subpath: './http', source: 'src/http/index.ts', base: 'dist/http/index' },
      { subpath: './cluster', source: 'src/cluster/index.ts', base: 'dist/cluster/index' },
      { subpath: './metrics', source: 'src/metrics/index.ts', base: 'dist/metrics/index' },
      { subpath: './testing', source: 'src/testing/index.ts', base: 'dist/testing/index' },
      { subpath: './sentinel', source: 'src/sentinel/index.ts', base: 'dist/sentinel/index' },
    ]);
  });

  it('refuses an entry point that does not name its source, naming the package and subpath', () => {
    expect(() => entryPointsOf('@floodgate/x', { exports: { './y': { default: './dist/y.js' } } })).toThrow(
      '@floodgate/x: exports["./y"] must name its source file, as { "@floodgate/source": "./src/<path>.ts" }, got {"default":"./dist/y.js"}',
    );
  });

  it('gives each entry point an import condition with .mjs and .d.mts, and a require condition with .js and .d.ts', () => {
    const fields = canonicalFields(entryPointsOf('@floodgate/x', { exports: { './y': './src/y/index.ts' } }));
    expect(fields.exports).toEqual({
      './y': {
        '@floodgate/source': './src/y/index.ts',
        import: { types: './dist/y/index.d.mts', default: './dist/y/index.mjs' },
        require: { types: './dist/y/index.d.ts', default: './dist/y/index.js' },
      },
      './package.json': './package.json',
    });
    expect(fields.files).toEqual(['dist', 'src']);
  });

  it('finds every package of the workspace fit to pack', () => {
    expect(workspacePackages().flatMap(manifestProblems)).toEqual([]);
  });

  it('says which manifest field is off and how to fix it, and that a README is missing', () => {
    const pkg = track(builtPackage(''));
    expect(manifestProblems(pkg)).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          '@floodgate/example: package.json "files" should be ["dist","src"] (run: npx tsx scripts/packages.ts fix)',
        ),
        expect.stringContaining('README.md is missing'),
      ]),
    );
  });

  it('writes an ES module wrapper that re-exports the CommonJS names and its default, with matching types', () => {
    const pkg = track(
      builtPackage(
        '"use strict"; exports.plugin = function plugin() {}; exports.LIMIT = 3; exports.default = exports.plugin;',
      ),
    );
    writeEsmWrapper(pkg, pkg.entryPoints[0]!);
    const mjs = readFileSync(join(pkg.dir, 'dist', 'index.mjs'), 'utf8');
    expect(mjs).toContain(
      "import cjs from './index.js';\nexport const {\n  plugin,\n  LIMIT,\n} = cjs;\nexport default cjs.default;\n",
    );
    expect(readFileSync(join(pkg.dir, 'dist', 'index.d.mts'), 'utf8')).toContain(
      "export * from './index.js';\nexport { plugin as default } from './index.js';\n",
    );
  });

  it('refuses a default export that has no name, since its types could not say what it is', () => {
    const pkg = track(builtPackage('"use strict"; exports.default = function () {};'));
    expect(() => writeEsmWrapper(pkg, pkg.entryPoints[0]!)).toThrow(
      '@floodgate/example (.): the default export must also be exported by name (export { x as default })',
    );
  });

  it('knows which source builds each file of dist/, and that a stray file has none', () => {
    expect(sourceOf('dist/http/index.d.mts')).toBe('src/http/index.ts');
    expect(sourceOf('dist/http/index.d.ts.map')).toBe('src/http/index.ts');
    expect(sourceOf('dist/index.js')).toBe('src/index.ts');
    expect(sourceOf('dist/api-temp/core.api.md')).toBeUndefined();
  });
});
