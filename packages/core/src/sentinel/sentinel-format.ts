import type { RuleSetOptions } from '../engine/kinds';
import { RuleValidationError } from '../kernel/errors';
import { show } from '../kernel/rule-reader';
import { GO_DIALECT } from './go-rules';
import { JAVA_DIALECT } from './java-rules';
import { SENTINEL_RULE_TYPES, type DialectCodec, type SentinelRuleType } from './sentinel-codec';
import { fromSentinelRules, toSentinelRules, type SentinelDialect } from './sentinel-rules';

/**
 * How a rule source keeps its rules: `'floodgate'`, Floodgate's rule set in one place (a file, a
 * key); `'sentinel'`, Sentinel's (Java) rule JSON, one place per Sentinel rule type, as
 * Sentinel's data sources keep them; `'sentinel-golang'`, the same in sentinel-golang's JSON.
 */
export type SentinelRuleFormat = 'floodgate' | 'sentinel' | 'sentinel-golang';

/** One Sentinel type's list as a source stores it: its JSON text, and how many rules it holds. */
export interface SentinelRuleText {
  /** The list as JSON. */
  readonly text: string;
  /** How many rules the list holds. */
  readonly rules: number;
}

/**
 * Sentinel's rule format for a rule source that keeps one text per Sentinel rule type (a file, a
 * Redis key): what `fileRuleSource` and `redisRuleSource` use with `format: 'sentinel'`, for a
 * source of your own.
 */
export interface SentinelFormat {
  /** Whose JSON: Sentinel's (`'java'`) or sentinel-golang's (`'go'`). */
  readonly dialect: SentinelDialect;
  /**
   * The rule set the texts hold, by type (see `fromSentinelRules`; an empty text holds no rules).
   * @throws RuleValidationError listing every problem at its Sentinel path, with `context` as
   * its message's prefix.
   */
  read(texts: { readonly [T in SentinelRuleType]?: string }, context: string): RuleSetOptions;
  /**
   * The text of each Sentinel type's list for `rules` (see `toSentinelRules`), with the texts
   * last read as `previous`, so unchanged rules are written back as they were; checked to read
   * back before it is returned.
   * @param space - indentation, as `JSON.stringify` takes it.
   * @throws RuleValidationError listing every problem, with `context` as its message's prefix.
   */
  write(
    rules: RuleSetOptions,
    previous: { readonly [T in SentinelRuleType]?: string },
    context: string,
    space?: number,
  ): { [T in SentinelRuleType]?: SentinelRuleText };
  /**
   * Checks the places a source is given by Sentinel rule type (`{ flow: 'flow-rules.json' }`):
   * at least one, each a type of the dialect (sentinel-golang has no gateway types), accepted by `ok`,
   * and none the place of another type.
   * @throws TypeError naming the first problem, with `where` as its prefix.
   */
  checkPlaces(places: unknown, ok: (place: unknown) => boolean, what: string, where: string): void;
}

const DIALECTS: Readonly<Record<'sentinel' | 'sentinel-golang', [SentinelDialect, DialectCodec]>> = {
  sentinel: ['java', JAVA_DIALECT],
  'sentinel-golang': ['go', GO_DIALECT],
};

/**
 * The {@link SentinelFormat} that `format` names, or `undefined` for `'floodgate'` (and when
 * absent).
 * @throws TypeError when `format` is not a {@link SentinelRuleFormat}, `where` naming the option.
 * @example
 * const format = sentinelFormat('sentinel', 'mySource: options.format')!;
 * fg.loadRules(format.read({ flow: flowText }, 'Rules from Nacos rejected'));
 */
export function sentinelFormat(format: unknown, where: string): SentinelFormat | undefined {
  if (format === undefined || format === 'floodgate') return undefined;
  if (format !== 'sentinel' && format !== 'sentinel-golang') {
    throw new TypeError(`${where} must be 'floodgate', 'sentinel' or 'sentinel-golang', got ${show(format)}`);
  }
  const [dialect, codec] = DIALECTS[format];
  return {
    dialect,
    read: (texts, context) => withContext(context, () => fromSentinelRules(texts, { dialect })),
    write(rules, previous, context, space) {
      return withContext(context, () => {
        const lists = toSentinelRules(rules, { dialect, previous });
        const texts: { [T in SentinelRuleType]?: SentinelRuleText } = {};
        for (const type of Object.keys(lists) as SentinelRuleType[]) {
          const list = lists[type]!;
          texts[type] = { text: JSON.stringify(list, null, space), rules: list.length };
        }
        // As every reader will see them: what was written reads back.
        fromSentinelRules(Object.fromEntries(Object.entries(texts).map(([type, t]) => [type, t.text])), { dialect });
        return texts;
      });
    },
    checkPlaces(places, ok, what, where) {
      if (typeof places !== 'object' || places === null || Array.isArray(places) || Object.keys(places).length === 0) {
        throw new TypeError(
          `${where} must give the place of at least one Sentinel rule type (${format} format), got ${show(places)}`,
        );
      }
      const seen = new Map<string, string>();
      for (const [type, place] of Object.entries(places)) {
        if (!(SENTINEL_RULE_TYPES as readonly string[]).includes(type))
          throw new TypeError(`${where}: ${type} is not a Sentinel rule type (${SENTINEL_RULE_TYPES.join(', ')})`);
        const refused = codec.refused[type as SentinelRuleType];
        if (refused !== undefined) throw new TypeError(`${where}.${type}: ${refused}`);
        if (!ok(place)) throw new TypeError(`${where}.${type} must be ${what}, got ${show(place)}`);
        const other = seen.get(JSON.stringify(place));
        if (other !== undefined) throw new TypeError(`${where}.${type} is ${other}'s too: each type needs its own`);
        seen.set(JSON.stringify(place), type);
      }
    },
  };
}

/** Runs `run`, its `RuleValidationError` carrying `context` as its message's prefix. */
function withContext<T>(context: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof RuleValidationError) throw new RuleValidationError(error.issues, context);
    throw error;
  }
}
