/** Which suites a bench run covers. */
export type SuiteName = 'core' | 'rules' | 'memory' | 'http' | 'grpc' | 'cluster' | 'overload' | 'outbound';

/** What `npm run bench -- [flags]` asked for. */
export interface BenchOptions {
  /**
   * `--quick`: every suite, shorter and run once (a smoke run under a minute: figures are
   * indicative, never quoted).
   */
  readonly quick: boolean;
  /** `--only core,http`: the suites to run (core, rules, memory, http, grpc, cluster, overload, outbound). @defaultValue all of them */
  readonly suites: readonly SuiteName[];
  /**
   * `--runs N`: fresh processes (core, memory, cluster) or interleaved rounds (HTTP) per figure.
   * @defaultValue 2 (1 in quick mode)
   */
  readonly runs: number;
  /** `--out path`: the markdown report. @defaultValue bench/results/latest.md (quick.md in quick mode) */
  readonly out: string | undefined;
  /** `--no-write`: print only. */
  readonly write: boolean;
  /** `--render file.json`: measure nothing; render the report of a saved run (the `.json` written beside the `.md`). */
  readonly render: string | undefined;
  /**
   * `--into file.json`: put the suites measured now into a saved run (replacing those suites,
   * keeping the others) and write it back with its `.md`, instead of writing a new report.
   */
  readonly into: string | undefined;
  /**
   * `--append` (with `--into`; core, http and overload only): add the processes or rounds measured now to
   * the saved suite's instead of replacing them, so its figures become medians over all of them.
   */
  readonly append: boolean;
  /**
   * `--before a.json[,b.json]`: saved runs on the same machine before a change (merged by suite),
   * whose core and HTTP figures the report shows beside this run's. With `--render`, the run is
   * saved back with them (beside the `.md` written), so it renders them without the flag.
   */
  readonly before: readonly string[];
}

/** Every suite, in the order a run measures them. */
export const ALL_SUITES: readonly SuiteName[] = [
  'core',
  'rules',
  'memory',
  'http',
  'grpc',
  'cluster',
  'overload',
  'outbound',
];
/** The suites whose processes or rounds repeated runs can add to a saved run's (`--append`). */
export const APPENDABLE_SUITES = ['core', 'http', 'overload'] as const satisfies readonly SuiteName[];
export type AppendableSuite = (typeof APPENDABLE_SUITES)[number];

/** Reads the command line; unknown flags fail loudly. */
export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  let quick = false;
  let suites: SuiteName[] = [...ALL_SUITES];
  let runs: number | undefined;
  let out: string | undefined;
  let write = true;
  let render: string | undefined;
  let into: string | undefined;
  let append = false;
  let before: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--quick') quick = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--only') {
      suites = value()
        .split(',')
        .map((name) => {
          if (!(ALL_SUITES as readonly string[]).includes(name))
            throw new Error(`--only: unknown suite ${name}; known: ${ALL_SUITES.join(', ')}`);
          return name as SuiteName;
        });
    } else if (arg === '--runs') {
      runs = Number(value());
      if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be an integer >= 1');
    } else if (arg === '--out') out = value();
    else if (arg === '--render') render = value();
    else if (arg === '--into') into = value();
    else if (arg === '--append') append = true;
    else if (arg === '--before')
      before = value()
        .split(',')
        .filter((path) => path !== '');
    else
      throw new Error(
        `unknown flag ${arg}; known: --quick, --only <${ALL_SUITES.join(',')}>, --runs N, --out path, --no-write, --render saved.json, --into saved.json, --append, --before saved.json[,saved.json]`,
      );
  }
  if (append && into === undefined) throw new Error('--append needs --into saved.json: the run to add to');
  if (append && suites.some((suite) => !(APPENDABLE_SUITES as readonly SuiteName[]).includes(suite)))
    throw new Error(
      `--append combines ${APPENDABLE_SUITES.join(', ')} runs only: add --only with some of them (--only core,http)`,
    );
  return { quick, suites, runs: runs ?? (quick ? 1 : 2), out, write, render, into, append, before };
}
