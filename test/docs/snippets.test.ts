import { join } from 'node:path';
import ts from 'typescript';
import { codeBlocks, docFiles, read, ROOT } from './markdown';

/**
 * The documentation's TypeScript examples compile as written: each ```ts block of every doc file
 * (the README, docs/**, the packages' READMEs, ...: `docFiles()`) is type-checked against the
 * packages' sources as a module of its own, its statements in an async function (so a snippet
 * may `return` or `await` at its top), with only its free variables declared. Names the snippets
 * share get their real types (`fg` is a Floodgate); every other free name is `any`, so what is
 * checked is the use of Floodgate's own API: names, options, rule fields, return types. Snippets
 * that import a framework get its real types (NestJS's with legacy decorators, as Nest compiles).
 */
const KNOWN: Readonly<Record<string, string>> = {
  fg: "import('@floodgate/core').Floodgate",
  clock: "import('@floodgate/core/testing').ManualClock",
  Floodgate: "typeof import('@floodgate/core').Floodgate",
  ManualClock: "typeof import('@floodgate/core/testing').ManualClock",
};

interface Snippet {
  readonly file: string;
  readonly line: number;
  readonly code: string;
}

function snippets(file: string): Snippet[] {
  return codeBlocks(read(file))
    .filter((block) => block.lang === 'ts' || block.lang === 'typescript')
    .map((block) => ({ file, line: block.line, code: block.code }));
}

/**
 * The snippet as a module: imports at the top, the rest in an async function (unless the snippet
 * is a module itself, with exports of its own), free names declared.
 */
function moduleOf(code: string, free: ReadonlySet<string>): string {
  const imports: string[] = [];
  const body: string[] = [];
  let inImport = false;
  for (const line of code.split('\n')) {
    if (/^import\s/.test(line) || inImport) {
      imports.push(line);
      inImport = !/;\s*(\/\/.*)?$/.test(line);
    } else {
      body.push(line);
    }
  }
  const declared = [...free].map((name) => `declare const ${name}: ${KNOWN[name] ?? 'any'};`);
  if (body.some((line) => line.startsWith('export '))) return [...imports, ...declared, ...body, ''].join('\n');
  return [...imports, ...declared, 'export async function snippet() {', ...body, '}', ''].join('\n');
}

/** Type-checks the files; NestJS examples with legacy decorators, as Nest compiles. */
function check(files: ReadonlyMap<string, string>): Map<string, readonly ts.Diagnostic[]> {
  const nest = new Map([...files].filter(([, code]) => code.includes("from '@nestjs/")));
  const plain = new Map([...files].filter(([file]) => !nest.has(file)));
  return new Map([...checkWith(plain, false), ...checkWith(nest, true)]);
}

function checkWith(
  files: ReadonlyMap<string, string>,
  legacyDecorators: boolean,
): Map<string, readonly ts.Diagnostic[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.check.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  )!;
  const options: ts.CompilerOptions = {
    ...config.options,
    noUnusedLocals: false,
    noUnusedParameters: false,
    noImplicitReturns: false,
    noEmit: true,
    experimentalDecorators: legacyDecorators,
    emitDecoratorMetadata: legacyDecorators,
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => files.get(file) ?? read(file);
  const exists = host.fileExists.bind(host);
  host.fileExists = (file) => files.has(file) || exists(file);
  const program = ts.createProgram([...files.keys()], options, host);
  const out = new Map<string, readonly ts.Diagnostic[]>();
  for (const file of files.keys()) out.set(file, ts.getPreEmitDiagnostics(program, program.getSourceFile(file)));
  return out;
}

describe('the documentation', () => {
  it("compiles every TypeScript example, declaring only each example's free variables", () => {
    const all = docFiles().flatMap(snippets);
    expect(all.filter((s) => s.file === 'README.md').length).toBeGreaterThan(1);
    expect(all.filter((s) => s.file.startsWith('docs/')).length).toBeGreaterThan(20);
    const name = (i: number): string => join(ROOT, 'test', 'docs', `doc-snippet-${i}.ts`);
    const free = all.map(() => new Set<string>());
    // First pass: find each snippet's free variables (TS2304 "Cannot find name"); second: check.
    for (const pass of [1, 2]) {
      const diagnostics = check(new Map(all.map((s, i) => [name(i), moduleOf(s.code, free[i]!)])));
      if (pass === 1) {
        all.forEach((_, i) => {
          for (const d of diagnostics.get(name(i)) ?? []) {
            if (d.code === 2304 || d.code === 2552)
              free[i]!.add(/'([^']+)'/.exec(ts.flattenDiagnosticMessageText(d.messageText, '\n'))![1]!);
          }
        });
        continue;
      }
      const problems = all.flatMap((s, i) =>
        (diagnostics.get(name(i)) ?? []).map(
          (d) => `${s.file}, example at line ${s.line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
        ),
      );
      expect(problems).toEqual([]);
    }
  });
});
