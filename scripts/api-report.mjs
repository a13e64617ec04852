#!/usr/bin/env node
// The public API reports (API Extractor): one per entry point of each package that has an
// api-extractor.<entry>.json, written to <package>/api/. `npm test` checks them: it fails
// - when the public surface changes and its report was not updated (`--update` rewrites them);
// - on a forgotten export: a type that a public signature names but that no entry point of the
//   package exports, so users cannot name it (a type that another entry point of the same package
//   exports is not forgotten: `Floodgate` in `@floodgate/core/http`'s signatures is exported by
//   `@floodgate/core`);
// - on an undocumented public declaration or member (every export has TSDoc);
// - when a package's root exports more names than ROOT_LIMITS allows it (names marked
//   `@deprecated`, kept for a minor version after they moved, are counted apart and listed).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import ts from 'typescript';

const update = process.argv.includes('--update');
/**
 * The most names a package's root entry point may export, its `@deprecated` ones aside: the root of
 * `@floodgate/core` is what a first program imports, on one screen (#25); the rest has an entry
 * point of its own (`/rules`, `/metrics`, `/testing`, ...).
 */
const ROOT_LIMITS = { core: 40 };
const root = join(import.meta.dirname, '..');
let failed = 0;
for (const pkg of readdirSync(join(root, 'packages'))) {
  const dir = join(root, 'packages', pkg);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => /^api-extractor\..+\.json$/.test(f)) : [];
  if (files.length === 0) continue;
  const configs = files.map((file) => ({ file, config: ExtractorConfig.loadFileAndPrepare(join(dir, file)) }));
  const exported = exportsByEntry(configs.map(({ config }) => config.mainEntryPointFilePath));
  for (const { file, config } of configs) {
    const problems = [];
    const result = Extractor.invoke(config, {
      localBuild: update,
      showVerboseMessages: false,
      messageCallback: (message) => {
        const verdict = judge(message, config.mainEntryPointFilePath, exported);
        if (verdict === 'fine') {
          message.logLevel = 'none';
          message.handled = true;
        } else if (verdict !== undefined) {
          message.logLevel = 'error';
          message.handled = true;
          problems.push(`  ${place(message)}: ${verdict}`);
        }
      },
    });
    if (problems.length > 0) {
      failed++;
      console.error(`${pkg}/${file}: ${problems.length} problem(s) in the public API:\n${problems.join('\n')}`);
    } else if (!result.succeeded) {
      failed++;
      console.error(
        `${pkg}/${file}: the public API changed (${result.errorCount} errors); run \`npm run api -- --update\` and commit packages/${pkg}/api/`,
      );
    } else if (result.apiReportChanged) {
      console.log(`${pkg}/${file}: report updated`);
    }
  }
  const limit = ROOT_LIMITS[pkg];
  const rootEntry = configs.find(({ config }) => config.mainEntryPointFilePath.endsWith('/dist/index.d.ts'));
  if (limit !== undefined && rootEntry !== undefined) {
    const entry = rootEntry.config.mainEntryPointFilePath;
    const deprecated = [...exported.deprecatedByEntry.get(entry)].sort();
    const count = exported.byEntry.get(entry).size - deprecated.length;
    const line = `${pkg}/${rootEntry.file}: ${count} names at the root (at most ${limit}), and ${deprecated.length} deprecated until they are removed: ${deprecated.join(', ')}`;
    if (count > limit) {
      failed++;
      console.error(`${line}\n  the root holds what a first program imports: export the rest from another entry point`);
    } else console.log(line);
  }
}
if (failed > 0) process.exit(1);
console.log(update ? 'API reports updated.' : 'API reports match the public API.');

/**
 * What is wrong with the public API, for a message that fails the check; `'fine'` for a
 * forgotten export that another entry point of the package exports; `undefined` for a message
 * this check leaves to API Extractor (the report-changed notice, compiler messages).
 */
function judge(message, entry, exported) {
  if (message.messageId === 'ae-forgotten-export') {
    // API Extractor names a symbol `X_2` when the entry point also exports another `X` (a
    // deprecated alias of it, say): the symbol meant is `X`.
    const name = /The symbol "([^"]+)"/.exec(message.text)?.[1]?.replace(/_\d+$/, '');
    const elsewhere = [...exported.byEntry].some(([other, names]) => other !== entry && names.has(name));
    if (name !== undefined && elsewhere && (exported.declared.get(name) ?? 0) <= 1) return 'fine';
    return `${message.text} (or by another entry point of the package)`;
  }
  if (message.messageId === 'ae-undocumented') return `${message.text}: write its TSDoc`;
  return undefined;
}

/** `file:line` of a message, relative to the repository. */
function place(message) {
  if (message.sourceFilePath === undefined) return '(no location)';
  return `${message.sourceFilePath.replace(`${root}/`, '')}:${message.sourceFileLine ?? 0}`;
}

/**
 * `byEntry`: the names each entry point (its `.d.ts`) exports, by the entry point's path.
 * `deprecatedByEntry`: the names of those whose declaration is marked `@deprecated`.
 * `declared`: how many top-level declarations of each name the package's declaration files hold
 * (deprecated aliases aside), so that a forgotten name is matched to another entry point's export
 * only when the package declares that name once.
 */
function exportsByEntry(entries) {
  const program = ts.createProgram(entries, { noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const byEntry = new Map();
  const deprecatedByEntry = new Map();
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    const symbols = module === undefined ? [] : checker.getExportsOfModule(module);
    byEntry.set(entry, new Set(symbols.map((s) => s.name)));
    const isDeprecated = (symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return target.getJsDocTags(checker).some((tag) => tag.name === 'deprecated');
    };
    deprecatedByEntry.set(entry, new Set(symbols.filter(isDeprecated).map((s) => s.name)));
  }
  const declared = new Map();
  for (const source of program.getSourceFiles()) {
    if (source.fileName.includes('/node_modules/') || program.isSourceFileDefaultLibrary(source)) continue;
    // A function's overloads, or a class and the interface merged into it, are one `X` of the file.
    const inFile = new Set();
    for (const statement of source.statements) {
      // A deprecated alias re-declares a name exported elsewhere: it is not a second `X`.
      if (ts.getJSDocDeprecatedTag(statement) !== undefined) continue;
      const names = ts.isVariableStatement(statement)
        ? statement.declarationList.declarations.map((d) => d.name.getText(source))
        : statement.name !== undefined && ts.isIdentifier(statement.name)
          ? [statement.name.text]
          : [];
      for (const name of names) inFile.add(name);
    }
    for (const name of inFile) declared.set(name, (declared.get(name) ?? 0) + 1);
  }
  return { byEntry, declared, deprecatedByEntry };
}
