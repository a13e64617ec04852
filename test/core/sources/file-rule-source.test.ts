import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  mkdirSync,
  writeFileSync,
  renameSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource } from '@floodgate/core/rules';
import type { RulesRejectedEvent } from '@floodgate/core/metrics';
import { until } from '../../support/until';

const WAIT_MS = 5000;
let dir: string;
let file: string;
const open: FileRuleSource[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'floodgate-rules-'));
  file = join(dir, 'rules.json');
});

afterEach(() => {
  for (const source of open.splice(0)) source.close();
  rmSync(dir, { recursive: true, force: true });
});

const flow = (threshold: number): string => JSON.stringify({ flow: [{ resource: 'api', threshold }] });
const threshold = (fg: Floodgate): number | undefined =>
  fg.getRules().flow.find((rule) => rule.resource === 'api')?.threshold;

function follow(fg: Floodgate, errors: unknown[] = []): FileRuleSource {
  const source = fileRuleSource(fg, file, { debounceMs: 10, onError: (error) => errors.push(error) });
  open.push(source);
  return source;
}

/** Writes `text` under a temp name and renames it over the file, as editors and deploy tools do. */
function replaceAtomically(text: string): void {
  const temp = join(dir, '.rules.json.tmp');
  writeFileSync(temp, text);
  renameSync(temp, file);
}

function rejections(fg: Floodgate): RulesRejectedEvent[] {
  const events: RulesRejectedEvent[] = [];
  fg.on('rulesRejected', (event) => events.push(event));
  return events;
}

describe('fileRuleSource', () => {
  it('loads the file at start, with source file', () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    follow(fg);
    expect(threshold(fg)).toBe(3);
    expect(fg.describeRules()).toEqual([expect.objectContaining({ kind: 'flow', layer: 'loaded', source: 'file' })]);
  });

  it('loads nothing when the file is absent at start, and applies it once it is created', async () => {
    const fg = new Floodgate();
    const errors: unknown[] = [];
    follow(fg, errors);
    expect(fg.getRules().flow).toEqual([]);
    writeFileSync(file, flow(4));
    await until(() => threshold(fg) === 4, 'the new file', WAIT_MS);
    expect(errors).toEqual([]);
  });

  it('applies a file written in place', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    follow(fg);
    writeFileSync(file, flow(5));
    await until(() => threshold(fg) === 5, 'the edit', WAIT_MS);
  });

  it('applies a file replaced by an atomic rename', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    follow(fg);
    replaceAtomically(flow(6));
    await until(() => threshold(fg) === 6, 'the renamed file', WAIT_MS);
  });

  it('applies a Kubernetes ConfigMap update (the ..data symlink swapped to a new directory)', async () => {
    mkdirSync(join(dir, '..2026_01'));
    writeFileSync(join(dir, '..2026_01', 'rules.json'), flow(3));
    symlinkSync('..2026_01', join(dir, '..data'));
    symlinkSync(join('..data', 'rules.json'), file);
    const fg = new Floodgate();
    follow(fg);
    expect(threshold(fg)).toBe(3);
    mkdirSync(join(dir, '..2026_02'));
    writeFileSync(join(dir, '..2026_02', 'rules.json'), flow(7));
    symlinkSync('..2026_02', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    rmSync(join(dir, '..2026_01'), { recursive: true });
    await until(() => threshold(fg) === 7, 'the swapped ConfigMap', WAIT_MS);
  });

  it('rejects a version that is not JSON with rulesRejected, and keeps the rules in force', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    const errors: unknown[] = [];
    const rejected = rejections(fg);
    follow(fg, errors);
    replaceAtomically('{ "flow": [ oops');
    await until(() => rejected.length === 1, 'the rejection', WAIT_MS);
    expect(rejected[0]).toMatchObject({
      source: 'file',
      issues: [{ path: '', message: expect.stringContaining('is not valid JSON') }],
    });
    expect(errors).toEqual([rejected[0]!.error]);
    expect(threshold(fg)).toBe(3);
  });

  it('rejects an invalid version whole, naming every problem by path, and keeps the rules in force', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    const rejected = rejections(fg);
    follow(fg);
    replaceAtomically(
      JSON.stringify({
        flow: [
          { resource: 'api', threshold: 9 },
          { resource: 'other', threshold: -1 },
        ],
        circuitBreakers: [{ resource: 'api' }],
      }),
    );
    await until(() => rejected.length === 1, 'the rejection', WAIT_MS);
    expect(rejected[0]!.source).toBe('file');
    expect(rejected[0]!.issues.map((issue) => issue.path)).toEqual([
      'flow[1].threshold',
      'circuitBreakers[0].strategy',
      'circuitBreakers[0].threshold',
      'circuitBreakers[0].retryTimeoutMs',
    ]);
    expect(threshold(fg)).toBe(3);
    expect(fg.getRules().circuitBreakers).toEqual([]);
  });

  it('applies a good version after a bad one', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    const rejected = rejections(fg);
    follow(fg);
    replaceAtomically('not json');
    await until(() => rejected.length === 1, 'the rejection', WAIT_MS);
    replaceAtomically(flow(8));
    await until(() => threshold(fg) === 8, 'the good version', WAIT_MS);
  });

  it('empties a kind that an earlier version held and the new one lacks, and leaves kinds it never held alone', async () => {
    writeFileSync(
      file,
      JSON.stringify({
        flow: [{ resource: 'api', threshold: 3 }],
        circuitBreakers: [{ resource: 'api', strategy: 'errorCount', threshold: 2, retryTimeoutMs: 1000 }],
      }),
    );
    const fg = new Floodgate();
    fg.loadAuthorityRules([{ resource: 'api', origins: ['bad'], strategy: 'deny' }]);
    follow(fg);
    expect(fg.getRules().circuitBreakers).toHaveLength(1);
    replaceAtomically(flow(4));
    await until(() => threshold(fg) === 4, 'the new version', WAIT_MS);
    expect(fg.getRules().circuitBreakers).toEqual([]);
    expect(fg.getRules().authority).toHaveLength(1);
  });

  it('writes a rule set atomically, applies it at once, and other engines watching the file apply it', async () => {
    writeFileSync(file, flow(3));
    const [writer, reader] = [new Floodgate(), new Floodgate()];
    const source = follow(writer);
    follow(reader);
    await source.write({ flow: [{ resource: 'api', threshold: 11 }] });
    expect(threshold(writer)).toBe(11);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ flow: [{ resource: 'api', threshold: 11 }] });
    expect(readdirSync(dir)).toEqual(['rules.json']);
    await until(() => threshold(reader) === 11, 'the other engine', WAIT_MS);
  });

  it('refuses to write an invalid rule set, and leaves the file and the rules alone', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    const source = follow(fg);
    await expect(source.write({ flow: [{ resource: 'api', threshold: -2 }] })).rejects.toMatchObject({
      code: 'ERR_INVALID_RULE',
      issues: [{ path: 'flow[0].threshold' }],
    });
    expect(readFileSync(file, 'utf8')).toBe(flow(3));
    expect(threshold(fg)).toBe(3);
  });

  it('stops following the file once closed; the rules stay', async () => {
    writeFileSync(file, flow(3));
    const [closed, open] = [new Floodgate(), new Floodgate()];
    const source = follow(closed);
    source.close();
    follow(open);
    replaceAtomically(flow(12));
    await until(() => threshold(open) === 12, 'the engine still following', WAIT_MS);
    await source.reload();
    expect(threshold(closed)).toBe(3);
  });

  it('keeps the rules in force and reports once when the file is deleted', async () => {
    writeFileSync(file, flow(3));
    const fg = new Floodgate();
    const errors: unknown[] = [];
    const source = follow(fg, errors);
    rmSync(file);
    await source.reload();
    await source.reload();
    expect(errors).toEqual([expect.objectContaining({ code: 'ENOENT' })]);
    expect(threshold(fg)).toBe(3);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a bad path or options, naming them', () => {
    const fg = new Floodgate();
    expect(() => fileRuleSource(fg, '')).toThrow('path must be a non-empty string, got ""');
    expect(() => fileRuleSource(fg, file, { debounceMs: -1 })).toThrow(
      'options.debounceMs must be a finite number >= 0, got -1',
    );
    expect(() => fileRuleSource(fg, join(dir, 'absent', 'rules.json'))).toThrow(/cannot watch directory .*absent/);
  });
});

describe('fileRuleSource and rollout', () => {
  it('loads a shadow rule from the file, then enforces a share of it when the file says so', async () => {
    writeFileSync(file, JSON.stringify({ flow: [{ resource: 'api', threshold: 3, mode: 'shadow' }] }));
    const fg = new Floodgate();
    follow(fg);
    expect(fg.getRules().flow[0]).toMatchObject({ threshold: 3, mode: 'shadow' });
    replaceAtomically(JSON.stringify({ flow: [{ resource: 'api', threshold: 3, enforcePercent: 10 }] }));
    await until(() => fg.getRules().flow[0]?.enforcePercent === 10, 'the edit', WAIT_MS);
    expect(fg.getRules().flow[0]).not.toHaveProperty('mode');
  });

  it('rejects a bad rollout field in the file by its path, keeping the rules in force', () => {
    writeFileSync(file, JSON.stringify({ flow: [{ resource: 'api', threshold: 3, enforcePercent: 150 }] }));
    const fg = new Floodgate();
    const events = rejections(fg);
    follow(fg);
    expect(events[0]?.issues).toEqual([
      { path: 'flow[0].enforcePercent', message: 'must be a finite number within [0, 100], got 150' },
    ]);
    expect(fg.getRules().flow).toEqual([]);
  });
});
