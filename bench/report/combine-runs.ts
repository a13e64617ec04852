import type { CoreCaseResult } from '../core/core-suite';
import type { HttpFrameworkResult, HttpVariantResult } from '../http/http-suite';
import { median } from '../lib/median';
import type { BenchRun } from './render-report';

/**
 * Saved runs combined with a run: the "before" figures shown beside it (`--before`), and repeated
 * measurements of one suite added to a saved run (`--into file.json --append`), so its figures are
 * medians over every process or round. Both hold only the suites #30's goals are about, core and
 * HTTP: their figures are medians of independent samples (core: a mitata sample per process and
 * pass; HTTP: a round, with its ratios taken within the round), so samples of several runs can be
 * pooled and the median taken again.
 */

/** The suites that can be combined across runs. */
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
  /** The suites this run contributed. */
  readonly suites: readonly CombinableSuite[];
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

function originOf(run: SavedRun, suites: readonly CombinableSuite[], path?: string): RunOrigin {
  return {
    ...(path === undefined ? {} : { path }),
    command: run.command,
    startedAt: new Date(run.startedAt).toISOString(),
    ...(run.commit === undefined ? {} : { commit: run.commit }),
    loadStart: run.machine.loadStart,
    loadEnd: run.machine.loadEnd,
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
  const pool = <T, K>(older: readonly T[], newer: readonly T[], key: (t: T) => K, both: (o: T, n: T) => T): T[] => {
    const byKey = new Map(older.map((t) => [key(t), t]));
    const keys = new Set(newer.map(key));
    return [
      ...newer.map((n) => {
        const o = byKey.get(key(n));
        return o === undefined ? n : both(o, n);
      }),
      ...older.filter((o) => !keys.has(key(o))),
    ];
  };
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
 * A saved run with the suites of `now` added to its own (`--into saved.json --append`): the core
 * samples and HTTP rounds pooled, processes and rounds summed, and `now` recorded in `appended`.
 * The rest of the saved run (its other suites, command, date, machine) is kept.
 *
 * @throws Error when a suite is not core or HTTP, or was measured with other settings than the
 *   saved one (other than its number of processes or rounds), or one run is quick and the other not.
 */
export function appendRun(saved: SavedRun, now: SavedRun, suites: readonly string[]): SavedRun {
  const unknown = suites.filter((s) => !(COMBINABLE_SUITES as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new Error(`--append combines core and http runs only, not ${unknown.join(', ')}: measure those alone`);
  if (saved.quick !== now.quick) throw new Error('--append: a quick run and a full one cannot be combined');
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
  const measured = COMBINABLE_SUITES.filter((s) => suites.includes(s) && now[s] !== undefined);
  const pick = (run: SavedRun): Pick<BeforeFigures, 'core' | 'coreSettings' | 'http' | 'httpSettings'> => ({
    ...(measured.includes('core') ? { core: run.core, coreSettings: run.coreSettings } : {}),
    ...(measured.includes('http') ? { http: run.http, httpSettings: run.httpSettings } : {}),
  });
  return {
    ...saved,
    ...combineSuites(pick(saved), pick(now)),
    appended: [...(saved.appended ?? []), originOf(now, measured)],
  } as SavedRun;
}

/** The number of processes (core) or rounds (HTTP) behind a run's figures of a suite. */
export function samplesOf(
  run: Pick<BenchRun, 'runs' | 'coreSettings' | 'httpSettings'>,
  suite: CombinableSuite,
): number {
  return (suite === 'core' ? run.coreSettings?.processes : run.httpSettings?.rounds) ?? run.runs;
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
