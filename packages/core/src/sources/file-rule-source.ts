import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Floodgate } from '../engine/floodgate';
import type { RuleKindKey, RuleSetOptions } from '../engine/kinds';
import { parseRulesJson, ruleSetJson } from '../engine/rule-set-input';
import { RuleValidationError } from '../kernel/errors';
import {
  sentinelFormat,
  type SentinelFormat,
  type SentinelRuleFormat,
  type SentinelRuleText,
} from '../sentinel/sentinel-format';
import type { SentinelRuleType } from '../sentinel/sentinel-rules';

/** Options of `fileRuleSource`. */
export interface FileRuleSourceOptions {
  /**
   * How long the directory must stay quiet after a change before the file is read again, in
   * ms (an editor's or a deployment's burst of events is read once). @defaultValue 100
   */
  readonly debounceMs?: number;
  /**
   * Told about every version that could not be loaded (unreadable, not JSON, failing
   * validation; the engine also reports these as `rulesRejected` with source `'file'`) and
   * about watch errors. @defaultValue `process.emitWarning`
   */
  readonly onError?: (error: unknown) => void;
  /**
   * How the rules are kept: `'floodgate'`, one file of Floodgate's rule set; `'sentinel'` or
   * `'sentinel-golang'`, Sentinel's rule JSON, one file per Sentinel rule type, as Sentinel's
   * file data sources keep them: give the files by type (`{ flow: 'flow-rules.json', degrade:
   * 'degrade-rules.json' }`). See `docs/sentinel-rules.md`.
   * @defaultValue 'floodgate'
   */
  readonly format?: SentinelRuleFormat;
}

/** Sentinel's rule files, by Sentinel rule type (`{ flow: '/etc/shop/flow-rules.json' }`). */
export type SentinelRuleFiles = { readonly [T in SentinelRuleType]?: string };

/** Defaults of {@link FileRuleSourceOptions}. */
export const FILE_RULE_SOURCE_DEFAULTS = Object.freeze({
  /** Quiet time before a changed file is read. */
  debounceMs: 100,
  /** Floodgate's own rule set, in one file. */
  format: 'floodgate',
});

/** The `source` that rules from a file are loaded with (see `describeRules()`). */
const SOURCE = 'file';

/** One watched file: its path, the Sentinel type it holds (none for Floodgate's format), its last text. */
interface WatchedFile {
  readonly path: string;
  readonly type: SentinelRuleType | undefined;
  /** The text last read, kept while the file is missing. */
  text: string | undefined;
  missingReported: boolean;
}

/**
 * Rules from a JSON file (Sentinel's file data source): read at start, then watched. The
 * directory is watched rather than the file, so editors' atomic renames and Kubernetes
 * ConfigMap updates (a `..data` symlink swapped in the same directory) are seen. Each valid
 * version is applied whole through `loadRules` with source `'file'`: the kinds it holds
 * replace the loaded rules of those kinds, and a kind that the last applied version held and
 * this one lacks is emptied. A version that is unreadable, not JSON, not an object (`null`,
 * `[]`, `5`, `true`, `"text"`), holding an unknown kind or a `__proto__` key, or invalid in any
 * rule is rejected whole (`rulesRejected`, `onError`) and the rules in force stay. The same file
 * can be written with {@link FileRuleSource.write} (temp file + rename), which makes it a durable
 * rule store, for `@floodgate/dashboard` among others: every instance watching the file, and
 * every restart, gets what was written.
 *
 * In Sentinel's format the source follows one file per Sentinel rule type, and a version is the
 * files together: a change to any is read with the others' last texts, converted
 * (`fromSentinelRules`) and applied or rejected whole; a file absent at start adds nothing, and
 * one that goes missing keeps its last text.
 */
export class FileRuleSource {
  /** The watched file, as an absolute path (in Sentinel's format, the first type's). */
  readonly path: string;
  /** In Sentinel's format, each watched file by Sentinel rule type, as absolute paths; `{}` otherwise. */
  readonly files: SentinelRuleFiles;
  /** How this store is named to users (the dashboard says "written through file"). */
  readonly name = SOURCE;
  private readonly watched: readonly WatchedFile[];
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The texts last applied (or rejected), so an unchanged version is not loaded again. */
  private lastVersion: string | undefined;
  /** The kinds the last applied version held. */
  private lastKinds: readonly RuleKindKey[] = [];
  /** Reads run one at a time, in order. */
  private reading: Promise<void> = Promise.resolve();
  private closed = false;

  /** @internal Use `fileRuleSource`. */
  constructor(
    private readonly engine: Floodgate,
    paths: string | SentinelRuleFiles,
    private readonly format: SentinelFormat | undefined,
    private readonly debounceMs: number,
    private readonly onError: (error: unknown) => void,
  ) {
    const entries: [SentinelRuleType | undefined, string][] =
      typeof paths === 'string' ? [[undefined, paths]] : (Object.entries(paths) as [SentinelRuleType, string][]);
    this.watched = entries.map(([type, path]) => ({
      path: resolve(path),
      type,
      text: undefined,
      missingReported: false,
    }));
    this.path = this.watched[0]!.path;
    const files: Partial<Record<SentinelRuleType, string>> = {};
    for (const file of this.watched) if (file.type !== undefined) files[file.type] = file.path;
    this.files = Object.freeze(files);
    for (const dir of new Set(this.watched.map((f) => dirname(f.path)))) {
      let watcher: FSWatcher;
      try {
        watcher = watch(dir, { persistent: false }, () => this.schedule());
      } catch (error) {
        this.close();
        throw new TypeError(
          `fileRuleSource: cannot watch directory ${JSON.stringify(dir)} of ${this.watched.find((f) => dirname(f.path) === dir)!.path}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      watcher.on('error', (error) => this.onError(error));
      this.watchers.push(watcher);
    }
    for (const file of this.watched) {
      try {
        file.text = readFileSync(file.path, 'utf8');
      } catch (error) {
        this.missing(file, error);
      }
    }
    this.apply();
  }

  /** Reads the files again and applies them if they changed. Resolves when done. */
  reload(): Promise<void> {
    const next = this.reading.then(() => this.readAndApply());
    this.reading = next;
    return next;
  }

  /**
   * Writes a rule set to the file atomically (a temp file in the same directory, renamed over
   * it; a symlink at the path is replaced by the file) and applies it at once; other
   * instances watching the file apply it when they see it. Validates first, the JSON text as
   * written (see `ruleSetJson`): an invalid set is never written. In Sentinel's format, each
   * kind given is written in Sentinel's shape (`toSentinelRules`, the files last read as
   * `previous`: unchanged rules are written back as they were) to the file of its type, one file
   * after the other; a kind without rules whose type has no file is left out, one with rules is
   * refused.
   * @throws RuleValidationError listing every problem (and, in Sentinel's format, what Sentinel
   * cannot express), before anything is written; the file system's error when a file cannot be
   * written.
   */
  async write(rules: RuleSetOptions): Promise<void> {
    const texts = this.textsOf(rules);
    for (const [file, text] of texts) await writeAtomically(file.path, text);
    const applied = this.reading.then(() => {
      for (const [file, text] of texts) file.text = text;
      this.apply();
    });
    this.reading = applied;
    await applied;
  }

  /** Stops watching; the rules stay loaded. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers) watcher.close();
  }

  /** The text each file gets for `rules`. @throws RuleValidationError before anything is written. */
  private textsOf(rules: RuleSetOptions): [WatchedFile, string][] {
    if (this.format === undefined) return [[this.watched[0]!, `${ruleSetJson(rules, 2)}\n`]];
    const written = this.format.write(rules, this.sentinelTexts(), `Rules not written to ${this.path}`, 2);
    const issues = [];
    const texts: [WatchedFile, string][] = [];
    for (const [type, { text, rules: count }] of Object.entries(written) as [SentinelRuleType, SentinelRuleText][]) {
      const file = this.watched.find((f) => f.type === type);
      if (file !== undefined) texts.push([file, `${text}\n`]);
      else if (count > 0)
        issues.push({ path: type, message: `cannot be written: no file is given for Sentinel's ${type} rules` });
    }
    if (issues.length > 0) throw new RuleValidationError(issues, 'Rules not written');
    return texts;
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), this.debounceMs);
    this.timer.unref();
  }

  private async readAndApply(): Promise<void> {
    for (const file of this.watched) {
      if (this.closed) return;
      try {
        file.text = await readFile(file.path, 'utf8');
        file.missingReported = false;
      } catch (error) {
        this.missing(file, error);
      }
    }
    if (!this.closed) this.apply();
  }

  /** The last texts of Sentinel's files, by type. */
  private sentinelTexts(): Partial<Record<SentinelRuleType, string>> {
    const texts: Partial<Record<SentinelRuleType, string>> = {};
    for (const file of this.watched)
      if (file.type !== undefined && file.text !== undefined) texts[file.type] = file.text;
    return texts;
  }

  /**
   * Applies the files' last texts whole, or rejects them whole. The version is judged as it is
   * (`null`, `[]`, `5`, an unknown kind or a `__proto__` key are refused); only a valid one empties
   * the kinds the last version held and this one lacks.
   */
  private apply(): void {
    if (this.watched.every((f) => f.text === undefined)) return;
    const version = JSON.stringify(this.watched.map((f) => f.text ?? null));
    if (version === this.lastVersion) return;
    this.lastVersion = version;
    let parsed: unknown;
    try {
      parsed =
        this.format === undefined
          ? parseRulesJson(this.watched[0]!.text!, `Rules from ${this.path} rejected`)
          : this.format.read(this.sentinelTexts(), `Rules from ${Object.values(this.files).join(', ')} rejected`);
    } catch (error) {
      if (!(error instanceof RuleValidationError)) throw error;
      this.engine.reportRejectedRules(error, { source: SOURCE });
      this.onError(error);
      return;
    }
    try {
      const loaded = this.engine.loadRules(parsed as RuleSetOptions, { source: SOURCE, replaces: this.lastKinds });
      this.lastKinds = Object.keys(loaded) as RuleKindKey[];
    } catch (error) {
      this.onError(error);
    }
  }

  /** A file is absent or unreadable: the rules in force stay; said once until it is back. */
  private missing(file: WatchedFile, error: unknown): void {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && file.text === undefined) return;
    if (file.missingReported) return;
    file.missingReported = true;
    this.onError(error);
  }
}

/** Writes `text` to `path` atomically: a temp file in the same directory, renamed over it. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  try {
    await writeFile(temp, text, { encoding: 'utf8', flush: true });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * Loads rules from a JSON file (`{ "flow": [...], "circuitBreakers": [...] }`) now, and again
 * whenever it changes; see {@link FileRuleSource}. A file absent at start loads nothing (it may
 * be created later, or written through {@link FileRuleSource.write}).
 * @throws TypeError when `path` is not a non-empty string, an option is invalid, or the file's
 * directory cannot be watched.
 * @example
 * const rules = fileRuleSource(fg, '/etc/myapp/rules.json');
 * fg.on('rulesRejected', ({ source, issues }) => log.error({ source, issues }, 'rules rejected'));
 * // ... on shutdown:
 * rules.close();
 */
export function fileRuleSource(fg: Floodgate, path: string, options?: FileRuleSourceOptions): FileRuleSource;
/**
 * Loads rules kept in Sentinel's format, one file per Sentinel rule type as Sentinel's file data
 * sources keep them, now and whenever one changes; see {@link FileRuleSource}.
 * @throws TypeError when `files` names no file, a type the format refuses, or a path that is
 * not a non-empty string; when an option is invalid, or a directory cannot be watched.
 * @example
 * const rules = fileRuleSource(fg, { flow: '/etc/shop/flow-rules.json', degrade: '/etc/shop/degrade-rules.json' }, { format: 'sentinel' });
 */
export function fileRuleSource(
  fg: Floodgate,
  files: SentinelRuleFiles,
  options: FileRuleSourceOptions & { readonly format: 'sentinel' | 'sentinel-golang' },
): FileRuleSource;
export function fileRuleSource(
  fg: Floodgate,
  path: string | SentinelRuleFiles,
  options: FileRuleSourceOptions = {},
): FileRuleSource {
  if (typeof options !== 'object' || options === null) throw new TypeError('fileRuleSource: options must be an object');
  const format = sentinelFormat(options.format, 'fileRuleSource: options.format');
  if (format === undefined) {
    if (typeof path !== 'string' || path === '')
      throw new TypeError(`fileRuleSource: path must be a non-empty string, got ${JSON.stringify(path)}`);
  } else {
    format.checkPlaces(
      path,
      (value) => typeof value === 'string' && value !== '',
      'a non-empty string',
      'fileRuleSource: files',
    );
  }
  const debounceMs = options.debounceMs ?? FILE_RULE_SOURCE_DEFAULTS.debounceMs;
  if (typeof debounceMs !== 'number' || !Number.isFinite(debounceMs) || debounceMs < 0) {
    throw new TypeError(
      `fileRuleSource: options.debounceMs must be a finite number >= 0, got ${JSON.stringify(debounceMs)}`,
    );
  }
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new TypeError('fileRuleSource: options.onError must be a function');
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.emitWarning(`Floodgate file rule source: ${String(error)}`, { code: 'FLOODGATE_RULE_SOURCE' }));
  return new FileRuleSource(fg, path, format, debounceMs, onError);
}
