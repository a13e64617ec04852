import type { CoreCaseResult } from '../core/core-suite';
import type { HttpFrameworkResult, HttpVariantResult } from '../http/http-suite';
import { APPENDABLE_SUITES, type AppendableSuite, type SuiteName } from '../lib/bench-options';
import { median } from '../lib/median';
import { ownCapacities, roundBaselines, summarizeBaselines } from '../overload/overload-suite';
import type { BenchRun } from './render-report';

/**
 * Saved runs combined with a run: the "before" figures shown beside it (`--before`), and repeated
 * measurements of one suite added to a saved run (`--into file.json --append`), so its figures are
 * medians over every process or round. Before figures hold only the suites #30's goals are about,
 * core and HTTP; repeated runs also the overload suite (#28's goals). Their figures are medians of
 * independent samples (core: a mitata sample per process and pass; HTTP: a round, with its ratios
 * taken within the round; overload: a round, with its ratios taken against the round's own
 * baseline), so samples of several runs can be pooled and the median taken again.
 */

/** The suites that can be shown as before figures. */
export const COMBINABLE_SUITES = ['core', 'http'] as const;
export type CombinableSuite = (typeof COMBINABLE_SUITES)[number];

/** Where a combined run's figures came from: enough for the report to name it. */
export interface RunOrigin {
  /** The saved run's file, as given (before runs only). */
  readonly path?: string;
  readonly command: string;
  /** ISO date and time the run started. */
  readonly startedAt: string;
  readonly commit?: string;
  /** 1-minute load average at the start and the end of the run. */
  readonly loadStart: number;
  readonly loadEnd: number;
  /** The CPU it ran on (origins saved before it was recorded have none). */
  readonly cpu?: string;
  /** The suites this run contributed. */
  readonly suites: readonly SuiteName[];
}

/** The suites `origins` contributed, in words: `HTTP and core`. */
export function combinedSuites(origins: readonly RunOrigin[]): string {
  const suites = new Set(origins.flatMap((o) => o.suites));
  return [...suites].map((s) => (s === 'http' ? 'HTTP' : s)).join(' and ');
}

/** The before figures a run is shown beside: saved runs' core and HTTP suites, merged by suite. */
export interface BeforeFigures {
  readonly runs: readonly RunOrigin[];
  readonly core?: CoreCaseResult[];
  readonly coreSettings?: BenchRun['coreSettings'];
  readonly http?: HttpFrameworkResult[];
  readonly httpSettings?: BenchRun['httpSettings'];
}

/** A saved run as JSON gives it back (dates as strings). */
export type SavedRun = Omit<BenchRun, 'startedAt'> & { readonly startedAt: string | Date };

function originOf(run: SavedRun, suites: readonly SuiteName[], path?: string): RunOrigin {
  return {
    ...(path === undefined ? {} : { path }),
    command: run.command,
    startedAt: new Date(run.startedAt).toISOString(),
    ...(run.commit === undefined ? {} : { commit: run.commit }),
    loadStart: run.machine.loadStart,
    loadEnd: run.machine.loadEnd,
    cpu: run.machine.cpu,
    suites,
  };
}

/**
 * Merges saved runs into before figures, by suite: one file may hold core, another HTTP. When two
 * hold the same suite, their samples (core) or rounds (HTTP) are pooled, as {@link appendRun} does.
 *
 * @throws Error when a file holds neither core nor HTTP figures, naming it.
 */
export function mergeBefore(saved: readonly { path: string; run: SavedRun }[]): BeforeFigures {
  let merged: BeforeFigures = { runs: [] };
  for (const { path, run } of saved) {
    const suites = COMBINABLE_SUITES.filter((suite) => run[suite] !== undefined);
    if (suites.length === 0) throw new Error(`--before ${path}: the run holds no core or http figures`);
    merged = {
      runs: [...merged.runs, originOf(run, suites, path)],
      ...combineSuites(merged, run),
    };
  }
  return merged;
}

/** Core and HTTP of `a` with those of `b` added (processes and rounds summed). */
function combineSuites(
  a: Pick<BeforeFigures, 'core' | 'coreSettings' | 'http' | 'httpSettings'>,
  b: Pick<BeforeFigures, 'core' | 'coreSettings' | 'http' | 'httpSettings'>,
): Pick<BeforeFigures, 'core' | 'coreSettings' | 'http' | 'httpSettings'> {
  const out: { -readonly [K in keyof BeforeFigures]?: BeforeFigures[K] } = {};
  if (a.core || b.core) out.core = a.core && b.core ? combineCore(a.core, b.core) : (b.core ?? a.core);
  const cs = a.coreSettings && b.coreSettings;
  if (a.coreSettings || b.coreSettings)
    out.coreSettings = cs
      ? { ...b.coreSettings!, processes: a.coreSettings!.processes + b.coreSettings!.processes }
      : (b.coreSettings ?? a.coreSettings);
  if (a.http || b.http) out.http = a.http && b.http ? combineHttp(a.http, b.http) : (b.http ?? a.http);
  if (a.httpSettings || b.httpSettings)
    out.httpSettings =
      a.httpSettings && b.httpSettings
        ? { ...b.httpSettings, rounds: a.httpSettings.rounds + b.httpSettings.rounds }
        : (b.httpSettings ?? a.httpSettings);
  return out;
}

/**
 * The core cases of two runs as one: each case's samples pooled and its median taken again. Cases
 * in `b`'s order, then those only `a` has; a case one run lacks keeps the other's figures.
 */
export function combineCore(a: readonly CoreCaseResult[], b: readonly CoreCaseResult[]): CoreCaseResult[] {
  const older = new Map(a.map((c) => [c.id, c]));
  const ids = new Set(b.map((c) => c.id));
  return [
    ...b.map((c) => {
      const old = older.get(c.id);
      if (old === undefined) return c;
      const samples = [...old.samples, ...c.samples];
      const failed = c.failed ?? old.failed;
      return {
        ...c,
        samples,
        medianNs: median(samples),
        ...(failed === undefined ? {} : { failed }),
      };
    }),
    ...a.filter((c) => !ids.has(c.id)),
  ];
}

/**
 * The HTTP results of two runs as one: each framework's variants with their rounds pooled, and the
 * per-round ratios with them (each was taken within its own round, so they stay valid). Order as
 * {@link combineCore}.
 */
export function combineHttp(
  a: readonly HttpFrameworkResult[],
  b: readonly HttpFrameworkResult[],
): HttpFrameworkResult[] {
  const variants = (o: HttpVariantResult, n: HttpVariantResult): HttpVariantResult => ({
    variant: n.variant,
    rounds: [...o.rounds, ...n.rounds],
    rpsRatios: [...o.rpsRatios, ...n.rpsRatios],
    cpuRatios: [...o.cpuRatios, ...n.cpuRatios],
    cpuOverNoopUs: [...(o.cpuOverNoopUs ?? []), ...(n.cpuOverNoopUs ?? [])],
  });
  return pool(
    a,
    b,
    (fw) => fw.framework,
    (o, n) => ({
      framework: n.framework,
      variants: pool(o.variants, n.variants, (v) => v.variant, variants),
    }),
  );
}

/**
 * `newer` with `older` pooled in: an item both hold (by `key`) is `both(old, new)`; items only
 * `newer` holds keep their order, those only `older` holds follow.
 */
function pool<T, K>(older: readonly T[], newer: readonly T[], key: (t: T) => K, both: (o: T, n: T) => T): T[] {
  const byKey = new Map(older.map((t) => [key(t), t]));
  const keys = new Set(newer.map(key));
  return [
    ...newer.map((n) => {
      const o = byKey.get(key(n));
      return o === undefined ? n : both(o, n);
    }),
    ...older.filter((o) => !keys.has(key(o))),
  ];
}

/**
 * The overload suite of `now` added to `saved`'s: each guard's runs pooled (and each mixed guard's
 * at each load), each with its round's baseline, and capacity, rate and unloaded p99 taken again
 * as medians over every round.
 *
 * @throws Error when either run's rounds carry no baseline of their own (saved before the suite
 *   measured its capacity per round): their ratios were taken against another run's capacity; or
 *   when one run's measured their own server's capacity and the other's did not; or when one run's
 *   route was timed and the other's counted loop iterations (`OverloadSuiteResult.work`).
 */
function appendOverload(saved: SavedRun, now: SavedRun): Pick<SavedRun, 'overload' | 'overloadSettings'> {
  const a = saved.overload;
  const b = now.overload!;
  if (a === undefined) return { overload: b, overloadSettings: now.overloadSettings };
  if (roundBaselines(a) === undefined || roundBaselines(b) === undefined)
    throw new Error(
      '--append: the saved overload rounds measured the capacity once per run, not in each round, so their ratios cannot be pooled: measure the overload suite anew',
    );
  if (ownCapacities(a) !== ownCapacities(b))
    throw new Error(
      `--append: the ${ownCapacities(a) ? 'new' : 'saved'} overload runs took their goodput over their round's capacity, not their own server's, so their ratios cannot be pooled: measure the overload suite anew`,
    );
  if (a.work !== b.work)
    throw new Error(
      `--append: the ${a.work === 'timed' ? 'new' : 'saved'} overload runs' route ran a count of loop iterations, whose time changed part-way through a server, not a timed busy step, so their ratios cannot be pooled: measure the overload suite anew`,
    );
  const settings = now.overloadSettings;
  const variants = pool(
    a.variants,
    b.variants,
    (v) => v.variant,
    (o, n) => ({ ...n, runs: [...o.runs, ...n.runs] }),
  );
  return {
    overload: {
      ...b,
      ...summarizeBaselines(roundBaselines({ variants })!, settings?.overload ?? b.rate / b.capacity),
      variants,
      mixed: pool(
        a.mixed ?? [],
        b.mixed ?? [],
        (m) => `${m.load}× ${m.variant}`,
        (o, n) => ({ ...n, runs: [...o.runs, ...n.runs] }),
      ),
    },
    overloadSettings:
      settings && saved.overloadSettings
        ? { ...settings, rounds: saved.overloadSettings.rounds + settings.rounds }
        : (settings ?? saved.overloadSettings),
  };
}

/**
 * A saved run with the suites of `now` added to its own (`--into saved.json --append`): the core
 * samples and the HTTP and overload rounds pooled, processes and rounds summed, and `now` recorded
 * in `appended`.
 * The rest of the saved run (its other suites, command, date, machine) is kept.
 *
 * @throws Error when a suite is not core, HTTP or overload, or was measured with other settings than the
 *   saved one (other than its number of processes or rounds), or on another machine (CPU, cores),
 *   or one run is quick and the other not.
 */
export function appendRun(saved: SavedRun, now: SavedRun, suites: readonly string[]): SavedRun {
  const unknown = suites.filter((s) => !(APPENDABLE_SUITES as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new Error(
      `--append combines core, http and overload runs only, not ${unknown.join(', ')}: measure those alone`,
    );
  if (saved.quick !== now.quick) throw new Error('--append: a quick run and a full one cannot be combined');
  const machine = (run: SavedRun): string => `${run.machine.cpu}, ${run.machine.cores} cores`;
  if (machine(saved) !== machine(now))
    throw new Error(
      `--append: the saved run was measured on another machine (${machine(saved)}; now ${machine(now)}): not one measurement`,
    );
  const same = (x: object | undefined, y: object | undefined, count: string, suite: string): void => {
    if (x === undefined || y === undefined) return;
    const strip = (o: object): string => JSON.stringify({ ...o, [count]: 0 });
    if (strip(x) !== strip(y))
      throw new Error(
        `--append: the ${suite} settings differ (${strip(x)} saved, ${strip(y)} now): not one measurement`,
      );
  };
  same(saved.coreSettings, now.coreSettings, 'processes', 'core');
  same(saved.httpSettings, now.httpSettings, 'rounds', 'http');
  same(saved.overloadSettings, now.overloadSettings, 'rounds', 'overload');
  const measured = APPENDABLE_SUITES.filter((s) => suites.includes(s) && now[s] !== undefined);
  const pick = (run: SavedRun): Pick<BeforeFigures, 'core' | 'coreSettings' | 'http' | 'httpSettings'> => ({
    ...(measured.includes('core') ? { core: run.core, coreSettings: run.coreSettings } : {}),
    ...(measured.includes('http') ? { http: run.http, httpSettings: run.httpSettings } : {}),
  });
  return {
    ...saved,
    ...combineSuites(pick(saved), pick(now)),
    ...(measured.includes('overload') ? appendOverload(saved, now) : {}),
    appended: [...(saved.appended ?? []), originOf(now, measured)],
  } as SavedRun;
}

/**
 * A saved run with the suites of `now` in place of its own (`--into saved.json`): their figures and
 * settings replaced, `now` recorded in `remeasured`, and the runs appended or measured again before
 * for those suites no longer named for them. The rest of the saved run is kept (all of it when
 * `now` measured none of `suites`).
 */
export function replaceSuites(saved: SavedRun, now: SavedRun, suites: readonly SuiteName[]): SavedRun {
  const measured = suites.filter((suite) => now[suite] !== undefined);
  if (measured.length === 0) return saved;
  const replaced = Object.fromEntries(
    Object.entries(now).filter(([key]) => measured.some((suite) => key === suite || key === `${suite}Settings`)),
  );
  const others = (origins: readonly RunOrigin[] | undefined): RunOrigin[] =>
    (origins ?? [])
      .map((o) => ({ ...o, suites: o.suites.filter((suite) => !measured.includes(suite)) }))
      .filter((o) => o.suites.length > 0);
  const appended = others(saved.appended);
  const { appended: _appended, remeasured: _remeasured, ...rest } = saved;
  return {
    ...rest,
    ...replaced,
    ...(appended.length > 0 ? { appended } : {}),
    remeasured: [...others(saved.remeasured), originOf(now, measured)],
  } as SavedRun;
}

/** The suites later runs added to this one or measured again. */
function combined(run: Pick<BenchRun, 'appended' | 'remeasured'>): Set<SuiteName> {
  return new Set([...(run.appended ?? []), ...(run.remeasured ?? [])].flatMap((o) => o.suites));
}

/**
 * The suites whose figures later runs added to or measured again, each with the processes (core)
 * or rounds (HTTP, overload) its figures are now medians of; the report names these counts.
 */
export function pooledSuites(
  run: Pick<
    BenchRun,
    AppendableSuite | 'appended' | 'remeasured' | 'runs' | 'coreSettings' | 'httpSettings' | 'overloadSettings'
  >,
): { readonly suite: AppendableSuite; readonly samples: number }[] {
  const suites = combined(run);
  return APPENDABLE_SUITES.filter((suite) => run[suite] !== undefined && suites.has(suite)).map((suite) => ({
    suite,
    samples: samplesOf(run, suite),
  }));
}

/** The number of processes (core) or rounds (HTTP, overload) behind a run's figures of a suite. */
export function samplesOf(
  run: Pick<BenchRun, 'runs' | 'coreSettings' | 'httpSettings' | 'overloadSettings'>,
  suite: AppendableSuite,
): number {
  const settings = {
    core: run.coreSettings?.processes,
    http: run.httpSettings?.rounds,
    overload: run.overloadSettings?.rounds,
  };
  return settings[suite] ?? run.runs;
}

/** The before figure of a core case, when the before runs measured it. */
export function beforeCase(run: BenchRun, id: string): CoreCaseResult | undefined {
  const c = run.before?.core?.find((b) => b.id === id);
  return c === undefined || c.pending !== undefined || c.failed !== undefined || !Number.isFinite(c.medianNs)
    ? undefined
    : c;
}

/** The before results of an HTTP variant, when the before runs measured it. */
export function beforeVariant(run: BenchRun, framework: string, variant: string): HttpVariantResult | undefined {
  return run.before?.http?.find((fw) => fw.framework === framework)?.variants.find((v) => v.variant === variant);
}
