import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Floodgate } from '../engine/floodgate';
import type { RuleKindKey, RuleSetOptions } from '../engine/kinds';
import { parseRulesJson, ruleSetJson } from '../engine/rule-set-input';
import type { RuleValidationError } from '../kernel/errors';

/** Options of {@link fileRuleSource}. */
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
}

/** Defaults of {@link FileRuleSourceOptions}. */
export const FILE_RULE_SOURCE_DEFAULTS = Object.freeze({
  /** Quiet time before a changed file is read. */
  debounceMs: 100,
});

/** The `source` that rules from a file are loaded with (see `describeRules()`). */
const SOURCE = 'file';

/**
 * Rules from a JSON file (Sentinel's file data source): read at start, then watched. The
 * directory is watched rather than the file, so editors' atomic renames and Kubernetes
 * ConfigMap updates (a `..data` symlink swapped in the same directory) are seen. Each valid
 * version is applied whole through `loadRules` with source `'file'`: the kinds it holds
 * replace the loaded rules of those kinds, and a kind that the last applied version held and
 * this one lacks is emptied. A version that is unreadable, not JSON, not an object (`null`,
 * `[]`, `5`, `true`, `"text"`), holding an unknown kind or a `__proto__` key, or invalid in any
 * rule is rejected whole (`rulesRejected`, `onError`) and the rules in force stay. The same file can be written with
 * {@link FileRuleSource.write} (temp file + rename), which makes it a durable rule store, for
 * `@floodgate/dashboard` among others: every instance watching the file, and every restart,
 * gets what was written.
 */
export class FileRuleSource {
  /** The watched file, as an absolute path. */
  readonly path: string;
  /** How this store is named to users (the dashboard says "written through file"). */
  readonly name = SOURCE;
  private readonly watcher: FSWatcher;
  private timer: NodeJS.Timeout | undefined;
  /** The text last applied (or rejected), so an unchanged file is not loaded again. */
  private lastText: string | undefined;
  /** The kinds the last applied version held. */
  private lastKinds: readonly RuleKindKey[] = [];
  /** Reads run one at a time, in order. */
  private reading: Promise<void> = Promise.resolve();
  private closed = false;
  private missingReported = false;

  /** @internal Use {@link fileRuleSource}. */
  constructor(
    private readonly engine: Floodgate,
    path: string,
    private readonly debounceMs: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.path = resolve(path);
    const dir = dirname(this.path);
    try {
      this.watcher = watch(dir, { persistent: false }, () => this.schedule());
    } catch (error) {
      throw new TypeError(
        `fileRuleSource: cannot watch directory ${JSON.stringify(dir)} of ${JSON.stringify(path)}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.watcher.on('error', (error) => this.onError(error));
    let text: string | undefined;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      this.missing(error);
    }
    if (text !== undefined) this.apply(text);
  }

  /** Reads the file again and applies it if it changed. Resolves when done. */
  reload(): Promise<void> {
    const next = this.reading.then(() => this.readAndApply());
    this.reading = next;
    return next;
  }

  /**
   * Writes a rule set to the file atomically (a temp file in the same directory, renamed over
   * it; a symlink at the path is replaced by the file) and applies it at once; other
   * instances watching the file apply it when they see it. Validates first, the JSON text as
   * written (see `ruleSetJson`): an invalid set is never written.
   * @throws RuleValidationError listing every problem, before anything is written; the file
   * system's error when the file cannot be written.
   */
  async write(rules: RuleSetOptions): Promise<void> {
    const text = `${ruleSetJson(rules, 2)}\n`;
    const temp = join(
      dirname(this.path),
      `.${basename(this.path)}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`,
    );
    try {
      await writeFile(temp, text, { encoding: 'utf8', flush: true });
      await rename(temp, this.path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    const applied = this.reading.then(() => this.apply(text));
    this.reading = applied.then(() => undefined);
    await applied;
  }

  /** Stops watching; the rules stay loaded. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.watcher.close();
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), this.debounceMs);
    this.timer.unref();
  }

  private async readAndApply(): Promise<void> {
    if (this.closed) return;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      this.missing(error);
      return;
    }
    this.missingReported = false;
    if (!this.closed) this.apply(text);
  }

  /**
   * Applies one version whole, or rejects it whole. The version is judged as it is (`null`,
   * `[]`, `5`, an unknown kind or a `__proto__` key are refused); only a valid one empties the
   * kinds the last version held and this one lacks.
   */
  private apply(text: string): void {
    if (text === this.lastText) return;
    this.lastText = text;
    let parsed: unknown;
    try {
      parsed = parseRulesJson(text, `Rules from ${this.path} rejected`);
    } catch (error) {
      this.engine.reportRejectedRules(error as RuleValidationError, { source: SOURCE });
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

  /** The file is absent or unreadable: the rules in force stay; said once until it is back. */
  private missing(error: unknown): void {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && this.lastText === undefined) return;
    if (this.missingReported) return;
    this.missingReported = true;
    this.onError(error);
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
export function fileRuleSource(fg: Floodgate, path: string, options: FileRuleSourceOptions = {}): FileRuleSource {
  if (typeof path !== 'string' || path === '')
    throw new TypeError(`fileRuleSource: path must be a non-empty string, got ${JSON.stringify(path)}`);
  if (typeof options !== 'object' || options === null) throw new TypeError('fileRuleSource: options must be an object');
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
  return new FileRuleSource(fg, path, debounceMs, onError);
}
