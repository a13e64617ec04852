import type { CoreCaseResult } from '../../../bench/core/core-suite';
import type { HttpFrameworkResult, HttpRound } from '../../../bench/http/http-suite';
import { roundBaselines } from '../../../bench/overload/overload-suite';
import { appendRun, mergeBefore, replaceSuites, type SavedRun } from '../../../bench/report/combine-runs';
import { renderMarkdown, type BenchRun } from '../../../bench/report/render-report';

const machine = {
  node: 'v20',
  v8: '11',
  cpu: 'cpu',
  cores: 2,
  memoryGb: 4,
  loadStart: 0.1,
  loadEnd: 0.2,
  versions: {},
};
const coreSettings = { processes: 1, passes: 2, minCpuMs: 300, batchSamples: 4096 };
const httpSettings = {
  rounds: 1,
  seconds: 8,
  warmSeconds: 10,
  connections: 100,
  pipelining: 10,
  serverCore: 0,
  loadCore: 1,
};

function coreCase(id: string, samples: number[]): CoreCaseResult {
  return {
    id,
    owner: 'floodgate',
    label: id,
    async: false,
    samples,
    medianNs: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

function round(cpuUsPerResponse: number): HttpRound {
  return {
    rps: 1000,
    p50: 1,
    p99: 2,
    statuses: { 200: 1000 },
    errors: 0,
    responses: 1000,
    seconds: 8,
    serverCpuMs: 8,
    cpuUsPerResponse,
    serverBusy: 1,
    expectedShare: 1,
  } as HttpRound;
}

function http(overNoop: number): HttpFrameworkResult[] {
  const variant = (name: 'bare' | 'noop' | 'floodgate', over: number) => ({
    variant: name,
    rounds: [round(60 + over)],
    rpsRatios: [1],
    cpuRatios: [1],
    cpuOverNoopUs: [over],
  });
  return [{ framework: 'express', variants: [variant('bare', 0), variant('noop', 0), variant('floodgate', overNoop)] }];
}

function run(over: Partial<SavedRun>, commit = 'abc1234'): SavedRun {
  return {
    command: 'npm run bench',
    quick: false,
    runs: 1,
    startedAt: '2026-12-02T08:00:00.000Z',
    seconds: 1,
    commit,
    machine,
    pinned: true,
    ...over,
  };
}

describe('appendRun', () => {
  it('pools the core samples and the HTTP rounds of repeated runs, so the medians are over all of them', () => {
    const saved = run({
      core: [coreCase('fg.sync.qps', [100, 110]), coreCase('old.only', [5])],
      coreSettings,
      http: http(3),
      httpSettings,
    });
    const now = run(
      {
        core: [coreCase('fg.sync.qps', [130]), coreCase('new.only', [7])],
        coreSettings,
        startedAt: '2026-12-02T09:00:00.000Z',
      },
      'def5678',
    );
    const merged = appendRun(saved, now, ['core']);
    const qps = merged.core!.find((c) => c.id === 'fg.sync.qps')!;
    expect(qps.samples).toEqual([100, 110, 130]);
    expect(qps.medianNs).toBe(110);
    expect(merged.core!.map((c) => c.id)).toEqual(['fg.sync.qps', 'new.only', 'old.only']);
    expect(merged.coreSettings!.processes).toBe(2);
    expect(merged.http).toBe(saved.http);
    expect(merged.appended).toEqual([expect.objectContaining({ commit: 'def5678', suites: ['core'] })]);
    // only core was pooled: HTTP's figures are still the one run's
    const once = renderMarkdown({ ...(merged as BenchRun), startedAt: new Date(merged.startedAt) });
    expect(once).toContain('core 2 processes (the others 1 process or round) per figure');

    const twice = appendRun(merged, run({ http: http(1), httpSettings }), ['http']);
    const fg = twice.http![0]!.variants.find((v) => v.variant === 'floodgate')!;
    expect(fg.cpuOverNoopUs).toEqual([3, 1]);
    expect(fg.rounds).toHaveLength(2);
    expect(twice.httpSettings!.rounds).toBe(2);
    const page = renderMarkdown({ ...(twice as BenchRun), startedAt: new Date(twice.startedAt) });
    expect(page).toContain('core 2 processes, HTTP 2 interleaved rounds');
    expect(page).toContain('**Repeated runs**');
  });

  it('refuses suites other than core and HTTP, and runs measured with other settings', () => {
    const saved = run({ core: [coreCase('a', [1])], coreSettings });
    expect(() => appendRun(saved, saved, ['memory'])).toThrow('--append combines core, http and overload runs only');
    const other = run({ core: [coreCase('a', [1])], coreSettings: { ...coreSettings, minCpuMs: 40 } });
    expect(() => appendRun(saved, other, ['core'])).toThrow('the core settings differ');
    const elsewhere = run({ core: [coreCase('a', [1])], coreSettings, machine: { ...machine, cpu: 'other cpu' } });
    expect(() => appendRun(saved, elsewhere, ['core'])).toThrow(
      '--append: the saved run was measured on another machine (cpu, 2 cores; now other cpu, 2 cores)',
    );
  });
});

describe('before figures', () => {
  const before = mergeBefore([
    { path: 'core.json', run: run({ core: [coreCase('fg.sync.qps', [160])], coreSettings }, 'ce90dcb') },
    { path: 'http.json', run: run({ http: http(4.5), httpSettings }, 'ce90dcb') },
  ]);
  const now: BenchRun = {
    ...(run({
      core: [coreCase('fg.sync.qps', [134]), coreCase('fg.sync.three', [170])],
      coreSettings,
      http: http(1.5),
      httpSettings,
    }) as BenchRun),
    startedAt: new Date('2026-12-02T09:00:00.000Z'),
    before,
  };
  const page = renderMarkdown(now);

  it('merges several saved runs by suite', () => {
    expect(before.runs.map((r) => [r.path, r.suites])).toEqual([
      ['core.json', ['core']],
      ['http.json', ['http']],
    ]);
    expect(before.core).toHaveLength(1);
    expect(before.http).toHaveLength(1);
  });

  it("are shown beside this run's in the summary, the targets, the core and the HTTP tables", () => {
    expect(page).toContain('| sync `entry()+exit()`, one QPS rule | 134 ns (before 160 ns) |');
    expect(page).toContain('| sync `entry()+exit()`, QPS + breaker + hotspot | 170 ns |');
    expect(page).toContain('Express +1.5 / n/a µs');
    expect(page).toMatch(/\| Target \(issue\) \| This run \(median\) \| Verdict \| Before \|/);
    expect(page).toMatch(
      /sync entry\(\)\+exit\(\) with one QPS rule <= 120 ns \(#30\) \| 134 ns .*\| \*\*missed\*\* \| 160 ns .*: \*\*missed\*\* \|/,
    );
    expect(page).toMatch(/\| floodgate \| fg.sync.qps \| 134 ns \| 160 ns \|/);
    expect(page).toMatch(/\| floodgate \| fg.sync.three \| 170 ns \| {2}\|/);
    expect(page).toMatch(/\| floodgate \|.*\| \+1.5 µs \| \+4.5 µs \|/);
  });

  it('name the runs they come from: commit, date and load', () => {
    expect(page).toContain('- **Before**:');
    expect(page).toContain(
      '`core.json`: `npm run bench` on commit `ce90dcb`, started 2026-12-02 08:00 UTC, load average 0.10 → 0.20 (core)',
    );
  });

  it('are left out when there are none', () => {
    const { before: _, ...plain } = now;
    const text = renderMarkdown(plain);
    expect(text).not.toContain('(before ');
    expect(text).not.toContain('| Before |');
    expect(text).not.toContain('**Before**');
  });
});

describe('the load line', () => {
  const page = (loadStart: number, loadEnd: number): string => {
    const saved = run({ core: [coreCase('fg.sync.qps', [140])], coreSettings });
    return renderMarkdown({
      ...(saved as BenchRun),
      machine: { ...machine, loadStart, loadEnd },
      startedAt: new Date(saved.startedAt),
    });
  };

  it("calls a machine quiet before the run quiet, whatever the bench's own processes add by its end", () => {
    const text = page(0.35, 2.6);
    expect(text).toContain(
      "- **Load**: load average (1 min) 0.35 at the start, 2.60 at the end (with the bench's own processes).",
    );
    expect(text).not.toContain('the machine was busy');
  });

  it('calls a machine busy before the run busy', () => {
    expect(page(1.5, 1.6)).toContain('**the machine was busy');
  });
});

describe('appendRun with the overload suite', () => {
  const overloadSettings = { rounds: 1, seconds: 8, overload: 2, deadlineMs: 1000, mixedLoads: [4] };
  const opened = { sent: 100, statuses: { 200: 90 }, timedOut: 0, failed: 0, okWhileSending: 90, sendingSeconds: 1 };
  /** One round: its baseline, one run of each guard with `goodput` 200s per second, one mixed run of the queued guard. */
  /** What a round measured beyond its baseline's capacity: each run's own, and its ceilings. */
  interface Measured {
    readonly ownCapacity?: number;
    readonly ceilings?: { load: number; ratio: number }[];
  }
  function overloadRound(
    capacity: number,
    goodput: number,
    unloadedP99Ms: number,
    perRound = true,
    { ownCapacity, ceilings }: Measured = {},
  ): SavedRun['overload'] {
    const baseline = perRound ? { capacity, unloadedP99Ms, ...(ceilings ? { ceilings } : {}) } : undefined;
    const own = ownCapacity === undefined ? {} : { capacity: ownCapacity };
    const variant = (name: 'none' | 'system' | 'adaptive') => ({
      variant: name,
      runs: [
        { ...opened, okLatenciesMs: [], seconds: 1, p50Ms: 10, p99Ms: 20, goodput, serverCpuMs: 900, baseline, ...own },
      ],
    });
    return {
      capacity,
      rate: capacity * 2,
      workMs: 10,
      unloadedP99Ms,
      variants: [variant('none'), variant('system'), variant('adaptive')],
      mixed: [
        {
          load: 4,
          variant: 'queued',
          runs: [{ criticalSuccess: 1, criticalP99Ms: 2 * unloadedP99Ms, goodput, baseline, ...own }],
        },
      ],
    };
  }

  it("pools the rounds, each ratio over its own round's baseline", () => {
    const saved = run({ overload: overloadRound(80, 76, 15), overloadSettings });
    const now = run({ overload: overloadRound(90, 81, 20), overloadSettings }, 'def5678');
    const merged = appendRun(saved, now, ['overload']);
    const overload = merged.overload!;
    expect(roundBaselines(overload)).toEqual([
      { capacity: 80, unloadedP99Ms: 15 },
      { capacity: 90, unloadedP99Ms: 20 },
    ]);
    expect(overload.capacity).toBe(85);
    expect(overload.rate).toBe(170);
    expect(overload.unloadedP99Ms).toBe(17.5);
    expect(overload.variants.map((v) => v.runs.map((r) => r.goodput))).toEqual([
      [76, 81],
      [76, 81],
      [76, 81],
    ]);
    expect(overload.mixed![0]!.runs).toHaveLength(2);
    expect(merged.overloadSettings!.rounds).toBe(2);
    expect(merged.appended).toEqual([expect.objectContaining({ commit: 'def5678', suites: ['overload'] })]);
    const page = renderMarkdown({ ...(merged as BenchRun), startedAt: new Date(merged.startedAt) });
    // 76 / 80 = 0.95 and 81 / 90 = 0.90, not 76 and 81 over the pooled 85 (0.89, 0.95)
    expect(page).toContain('| 100.0 % / 0.90 – 0.95 |');
    // each critical p99 is twice its own round's unloaded p99
    expect(page).toMatch(/\| 4× \| concurrency 1, [^|]+\| 100\.00 % \| 0\.93 \| 35\.0 ms \| 2\.00 \|/);
    expect(page).toContain("the median of its rounds' (80 – 90)");
  });

  it('refuses rounds that measured their capacity once per run, and other settings', () => {
    const old = run({ overload: overloadRound(80, 76, 15, false), overloadSettings });
    const now = run({ overload: overloadRound(90, 81, 20), overloadSettings });
    expect(() => appendRun(old, now, ['overload'])).toThrow('measured the capacity once per run');
    const longer = run({ overload: overloadRound(90, 81, 20), overloadSettings: { ...overloadSettings, seconds: 4 } });
    expect(() => appendRun(now, longer, ['overload'])).toThrow('the overload settings differ');
    const own = run({ overload: overloadRound(90, 81, 20, true, { ownCapacity: 88 }), overloadSettings });
    expect(() => appendRun(now, own, ['overload'])).toThrow(
      "the saved overload runs took their goodput over their round's capacity",
    );
    expect(() => appendRun(own, now, ['overload'])).toThrow(
      "the new overload runs took their goodput over their round's capacity",
    );
    const timed = run({ overload: { ...overloadRound(90, 81, 20)!, work: 'timed' }, overloadSettings });
    expect(() => appendRun(now, timed, ['overload'])).toThrow(
      "the saved overload runs' route ran a count of loop iterations",
    );
    expect(() => appendRun(timed, now, ['overload'])).toThrow(
      "the new overload runs' route ran a count of loop iterations",
    );
    expect(appendRun(timed, timed, ['overload']).overload!.work).toBe('timed');
  });

  it("takes each goodput over its own server's capacity, and over its round's ceiling", () => {
    const ceilings = [{ load: 4, ratio: 0.96 }];
    const saved = run({ overload: overloadRound(80, 76, 15, true, { ownCapacity: 84, ceilings }), overloadSettings });
    const now = run({
      overload: overloadRound(90, 81, 20, true, { ownCapacity: 90, ceilings: [{ load: 4, ratio: 0.9 }] }),
      overloadSettings,
    });
    const merged = appendRun(saved, now, ['overload']);
    const page = renderMarkdown({ ...(merged as BenchRun), startedAt: new Date(merged.startedAt) });
    // 76 / 84 = 0.905 and 81 / 90 = 0.90 (over the rounds' 80 and 90: 0.95 and 0.90)
    expect(page).toContain('| 100.0 % / 0.90 |');
    // goodput / ceiling: 0.905 / 0.96 = 0.94 and 0.90 / 0.90 = 1.00, median 0.97
    expect(page).toMatch(/\| 4× \| concurrency 1, [^|]+\| 100\.00 % \| 0\.90 \| 0\.97 \| 35\.0 ms \| 2\.00 \|/);
    expect(page).toContain('0.93 at 4× (0.90 – 0.96)');
    expect(page).toContain('over the capacity of its own server');
    // a run without ceilings has no such column
    expect(
      renderMarkdown({
        ...(saved as BenchRun),
        overload: overloadRound(80, 76, 15, true, { ownCapacity: 84 }),
        startedAt: new Date(saved.startedAt),
      }),
    ).not.toContain('goodput / ceiling');
  });
});

describe('replaceSuites', () => {
  it('puts the suites measured again in place of the saved ones, and names the run they come from', () => {
    const saved = appendRun(
      run({ core: [coreCase('a', [100])], coreSettings, http: http(3), httpSettings }),
      run({ core: [coreCase('a', [120])], coreSettings, http: http(1), httpSettings }, 'bbb2222'),
      ['core', 'http'],
    );
    const now = run(
      { core: [coreCase('a', [90])], coreSettings, machine: { ...machine, cpu: 'other cpu' } },
      'ccc3333',
    );
    const replaced = replaceSuites(saved, now, ['core']);
    expect(replaced.core).toBe(now.core);
    expect(replaced.coreSettings!.processes).toBe(1);
    expect(replaced.http).toBe(saved.http);
    // the appended run is still named for HTTP, no longer for core
    expect(replaced.appended).toEqual([expect.objectContaining({ commit: 'bbb2222', suites: ['http'] })]);
    expect(replaced.remeasured).toEqual([expect.objectContaining({ commit: 'ccc3333', suites: ['core'] })]);
    const page = renderMarkdown({ ...(replaced as BenchRun), startedAt: new Date(replaced.startedAt) });
    expect(page).toContain('its core figures measured again by 1 later run');
    // the summary's first line says which suites are not the saved run's own
    expect(page).toContain(
      'One run of `npm run bench` on 2026-12-02, its core figures measured again on 2026-12-02, with the HTTP measurements of later runs on 2026-12-02 added to its own: ',
    );
    expect(page).toMatch(
      /- \*\*Measured again\*\*: the core figures replace this run's own, from 1 later run .*ccc3333.*\*\*on another CPU: other cpu\*\* \(core\)/,
    );
    expect(replaceSuites(saved, run({}), ['core'])).toBe(saved);
    // the run appended on the saved run's own CPU is not flagged
    expect(page).toMatch(/bbb2222`, started [^;]*→ 0\.20 \(HTTP\)/);
  });
});
