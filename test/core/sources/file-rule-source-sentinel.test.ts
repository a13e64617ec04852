import { copyFileSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Floodgate } from '@floodgate/core';
import { fileRuleSource, type FileRuleSource, type FileRuleSourceOptions } from '@floodgate/core/rules';
import { fromSentinelRules, toSentinelRules, type SentinelRuleFiles } from '@floodgate/core/sentinel';
import type { RulesRejectedEvent } from '@floodgate/core/metrics';
import { until } from '../../support/until';
import { fixture, fixtureDir, FIXTURES } from '../sentinel/helpers';

const WAIT_MS = 5000;
let dir: string;
const open: FileRuleSource[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'floodgate-sentinel-rules-'));
});

afterEach(() => {
  for (const source of open.splice(0)) source.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fixture set copied into the temp directory: its files by type. */
function copyFixtures(set: keyof typeof FIXTURES): SentinelRuleFiles {
  const files: Record<string, string> = {};
  for (const [type, name] of Object.entries(FIXTURES[set].files)) {
    copyFileSync(join(fixtureDir(set), name), join(dir, name));
    files[type] = join(dir, name);
  }
  return files;
}

function follow(
  fg: Floodgate,
  files: SentinelRuleFiles,
  format: 'sentinel' | 'sentinel-golang' = 'sentinel',
  errors: unknown[] = [],
): FileRuleSource {
  const options: FileRuleSourceOptions & { format: typeof format } = {
    format,
    debounceMs: 10,
    onError: (error) => errors.push(error),
  };
  const source = fileRuleSource(fg, files, options);
  open.push(source);
  return source;
}

function replaceAtomically(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

function rejections(fg: Floodgate): RulesRejectedEvent[] {
  const events: RulesRejectedEvent[] = [];
  fg.on('rulesRejected', (event) => events.push(event));
  return events;
}

const flowRule = (count: number, extra: object = {}) => ({ resource: 'api', grade: 1, count, ...extra });
const apiThreshold = (fg: Floodgate) => fg.getRules().flow.find((rule) => rule.resource === 'api')?.threshold;

describe("fileRuleSource in Sentinel's format", () => {
  it.each(Object.keys(FIXTURES) as (keyof typeof FIXTURES)[])(
    'loads the %s files at start, with source file, as fromSentinelRules reads them',
    (set) => {
      const fg = new Floodgate();
      const format = FIXTURES[set].dialect === 'go' ? 'sentinel-golang' : 'sentinel';
      const errors: unknown[] = [];
      follow(fg, copyFixtures(set), format, errors);
      const expected = new Floodgate();
      expected.loadRules(fromSentinelRules(fixture(set), { dialect: FIXTURES[set].dialect }));
      expect(fg.getRules()).toEqual(expected.getRules());
      expect(new Set(fg.describeRules().map((rule) => rule.source))).toEqual(new Set(['file']));
      expect(errors).toEqual([]);
    },
  );

  it("applies a change to one file, the other files' rules kept", async () => {
    const files = copyFixtures('java-file');
    const fg = new Floodgate();
    follow(fg, files);
    const breakers = fg.getRules().circuitBreakers;
    replaceAtomically(files.flow!, JSON.stringify([flowRule(7)]));
    await until(() => apiThreshold(fg) === 7, 'the edited flow file', WAIT_MS);
    expect(fg.getRules().flow).toHaveLength(1);
    expect(fg.getRules().circuitBreakers).toEqual(breakers);
  });

  it("reads sentinel-golang's flow and isolation files together into Floodgate's flow rules", async () => {
    const files = { flow: join(dir, 'flow.json'), isolation: join(dir, 'isolation.json') };
    writeFileSync(files.flow, JSON.stringify([{ resource: 'api', threshold: 10 }]));
    writeFileSync(files.isolation, JSON.stringify([{ resource: 'export', threshold: 2 }]));
    const fg = new Floodgate();
    follow(fg, files, 'sentinel-golang');
    expect(fg.getRules().flow.map((rule) => [rule.resource, rule.metric])).toEqual([
      ['api', 'qps'],
      ['export', 'concurrency'],
    ]);
    replaceAtomically(files.isolation, '[]');
    await until(() => fg.getRules().flow.length === 1, 'the emptied isolation file', WAIT_MS);
    expect(apiThreshold(fg)).toBe(10);
  });

  it('rejects a file holding a rule Floodgate cannot honour, naming it at its Sentinel path, and keeps the rules in force', async () => {
    const files = { flow: join(dir, 'flow.json') };
    writeFileSync(files.flow, JSON.stringify([flowRule(3)]));
    const fg = new Floodgate();
    const errors: unknown[] = [];
    const rejected = rejections(fg);
    follow(fg, files, 'sentinel', errors);
    replaceAtomically(files.flow, JSON.stringify([flowRule(9, { strategy: 2, refResource: 'entry' })]));
    await until(() => rejected.length === 1, 'the rejection', WAIT_MS);
    expect(rejected[0]).toMatchObject({
      source: 'file',
      issues: [{ path: 'flow[0].strategy', message: expect.stringMatching(/^2 \(CHAIN\) is not supported/) }],
    });
    expect(rejected[0]!.error.message).toMatch(
      new RegExp(`^Rules from ${files.flow} rejected: flow\\[0\\]\\.strategy`),
    );
    expect(errors).toEqual([rejected[0]!.error]);
    expect(apiThreshold(fg)).toBe(3);
  });

  it('rejects a file that is not JSON, naming its type', async () => {
    const files = { flow: join(dir, 'flow.json'), degrade: join(dir, 'degrade.json') };
    writeFileSync(files.flow, JSON.stringify([flowRule(3)]));
    const fg = new Floodgate();
    const rejected = rejections(fg);
    follow(fg, files);
    replaceAtomically(files.degrade, '[{ "resource": ');
    await until(() => rejected.length === 1, 'the rejection', WAIT_MS);
    expect(rejected[0]!.issues).toEqual([{ path: 'degrade', message: expect.stringMatching(/^is not valid JSON/) }]);
    expect(apiThreshold(fg)).toBe(3);
  });

  it('reads an empty file as no rules of its type, as Sentinel reads an empty data source', async () => {
    const files = { flow: join(dir, 'flow.json') };
    writeFileSync(files.flow, JSON.stringify([flowRule(3)]));
    const fg = new Floodgate();
    follow(fg, files);
    replaceAtomically(files.flow, '');
    await until(() => fg.getRules().flow.length === 0, 'the emptied file', WAIT_MS);
  });

  it('keeps the rules of a file that goes missing, saying so once', async () => {
    const files = { flow: join(dir, 'flow.json') };
    writeFileSync(files.flow, JSON.stringify([flowRule(3)]));
    const fg = new Floodgate();
    const errors: unknown[] = [];
    const source = follow(fg, files, 'sentinel', errors);
    rmSync(files.flow);
    await until(() => errors.length === 1, 'the missing file', WAIT_MS);
    await source.reload();
    expect(errors).toEqual([expect.objectContaining({ code: 'ENOENT' })]);
    expect(apiThreshold(fg)).toBe(3);
  });

  it("writes each kind in Sentinel's shape to its type's file, applies it at once, and other engines watching apply it", async () => {
    const files = { flow: join(dir, 'flow.json'), degrade: join(dir, 'degrade.json') };
    const [writer, reader] = [new Floodgate(), new Floodgate()];
    const source = follow(writer, files);
    follow(reader, files);
    const rules = {
      flow: [{ resource: 'api', threshold: 11 }],
      circuitBreakers: [{ resource: 'api', strategy: 'errorRatio' as const, threshold: 0.5, retryTimeoutMs: 5000 }],
    };
    await source.write(rules);
    expect(apiThreshold(writer)).toBe(11);
    const written = toSentinelRules(rules);
    expect(JSON.parse(readFileSync(files.flow, 'utf8'))).toEqual(written.flow);
    expect(JSON.parse(readFileSync(files.degrade, 'utf8'))).toEqual(written.degrade);
    expect(readdirSync(dir).sort()).toEqual(['degrade.json', 'flow.json']);
    // The two files are two changes to a watcher: under load it may apply them one at a time.
    await until(
      () => apiThreshold(reader) === 11 && reader.getRules().circuitBreakers.length === 1,
      'the other engine',
      WAIT_MS,
    );
  });

  it("writes the rules it read back as they were: the dashboard's ids and wrapped entities kept", async () => {
    const files = copyFixtures('java-dashboard');
    const fg = new Floodgate();
    const source = follow(fg, files);
    await source.write(fg.getRules());
    for (const [type, path] of Object.entries(files)) {
      expect([type, JSON.parse(readFileSync(path!, 'utf8'))]).toEqual([
        type,
        fixture('java-dashboard')[type as 'flow'],
      ]);
    }
  });

  it('writes a whole rule set (as the dashboard does), leaving out the empty kinds whose types have no file', async () => {
    const files = { flow: join(dir, 'flow.json') };
    const fg = new Floodgate();
    const source = follow(fg, files);
    await source.write({ ...fg.getRules(), flow: [{ resource: 'api', threshold: 4 }] });
    expect(apiThreshold(fg)).toBe(4);
    expect(readdirSync(dir)).toEqual(['flow.json']);
  });

  it.each([
    [
      'a kind with rules whose type has no file',
      { circuitBreakers: [{ resource: 'api', strategy: 'errorCount' as const, threshold: 1, retryTimeoutMs: 1000 }] },
      [{ path: 'degrade', message: "cannot be written: no file is given for Sentinel's degrade rules" }],
    ],
    [
      'what Sentinel cannot express',
      { flow: [{ resource: 'api', threshold: 5, behavior: 'warmUp' as const, warmUpPeriodMs: 1500 }] },
      [{ path: 'flow[0].warmUpPeriodMs', message: "must be whole seconds for Sentinel's warmUpPeriodSec, got 1500" }],
    ],
  ])('refuses to write %s, and leaves the files and the rules alone', async (_, rules, issues) => {
    const files = { flow: join(dir, 'flow.json') };
    const text = JSON.stringify([flowRule(3)]);
    writeFileSync(files.flow, text);
    const fg = new Floodgate();
    const source = follow(fg, files);
    await expect(source.write(rules)).rejects.toMatchObject({ code: 'ERR_INVALID_RULE', issues });
    expect(readFileSync(files.flow, 'utf8')).toBe(text);
    expect(readdirSync(dir)).toEqual(['flow.json']);
    expect(apiThreshold(fg)).toBe(3);
  });

  it.each([
    [
      'an unknown format',
      'rules.json',
      { format: 'nacos' },
      "fileRuleSource: options.format must be 'floodgate', 'sentinel' or 'sentinel-golang', got \"nacos\"",
    ],
    [
      "one path for Sentinel's files",
      'rules.json',
      { format: 'sentinel' },
      /^fileRuleSource: files must give the place of at least one Sentinel rule type/,
    ],
    [
      'no file',
      {},
      { format: 'sentinel' },
      /^fileRuleSource: files must give the place of at least one Sentinel rule type/,
    ],
    [
      "a type that is not Sentinel's",
      { flows: 'f.json' },
      { format: 'sentinel' },
      /^fileRuleSource: files: flows is not a Sentinel rule type/,
    ],
    [
      'gateway rules for sentinel-golang',
      { 'gw-flow': 'gw.json' },
      { format: 'sentinel-golang' },
      /^fileRuleSource: files\.gw-flow: sentinel-golang has no gateway flow rules/,
    ],
    [
      'authority rules for sentinel-golang',
      { authority: 'a.json' },
      { format: 'sentinel-golang' },
      'fileRuleSource: files.authority: sentinel-golang has no authority rules',
    ],
    [
      'an empty path',
      { flow: '' },
      { format: 'sentinel' },
      'fileRuleSource: files.flow must be a non-empty string, got ""',
    ],
    [
      'one file for two types',
      { flow: 'rules.json', degrade: 'rules.json' },
      { format: 'sentinel' },
      "fileRuleSource: files.degrade is flow's too: each type needs its own",
    ],
    ['files for the floodgate format', { flow: 'f.json' }, {}, /^fileRuleSource: path must be a non-empty string/],
  ])('refuses %s at construction', (_, path, options, message) => {
    expect(() => fileRuleSource(new Floodgate(), path as never, options as never)).toThrow(
      typeof message === 'string' ? new TypeError(message) : message,
    );
  });
});
