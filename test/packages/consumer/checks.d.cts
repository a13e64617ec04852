/** The types of checks.cjs: what a consumer hands over to be checked. */
declare function check(
  label: string,
  loaded: {
    readonly entryPoints: Readonly<Record<string, object>>;
    readonly fastifyApp: {
      ready(): PromiseLike<unknown>;
      inject(path: string): PromiseLike<{ statusCode: number }>;
      close(): PromiseLike<unknown>;
    };
    readonly expressApp: (req: never, res: never) => unknown;
    readonly koaApp: { callback(): (req: never, res: never) => unknown };
  },
): Promise<void>;
export = check;
