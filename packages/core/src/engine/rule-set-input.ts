import { RuleValidationError, type RuleIssue } from '../kernel/errors';
import { join, RuleReader } from '../kernel/rule-reader';
import type { RuleKind } from '../kernel/rule-kind';
import { normalizeWithRollout } from './rollout';
import { RULE_KINDS, type AnyRule, type RuleKindKey, type RuleSet } from './kinds';

/*
 * The one way into the rules from outside. `loadRules`, `declareRules`, the file and Redis rule
 * sources, `publishRules` and the dashboard's edits all validate with `normalizeRuleSet`, and
 * everything that arrives as text (a file, a Redis key or message, a request body) is parsed with
 * `parseRulesJson` first. A source judges what it was given, before it merges anything into it:
 * a non-object, an array, a primitive, `null`, an unknown kind or a prototype key anywhere is
 * refused by name, and the rules in force stay.
 */

/**
 * Keys refused anywhere in a rule set, at any depth: the ones that reach an object's prototype
 * when assigned (`Object.assign`, a spread into a literal, `obj[key] = value`). `JSON.parse`
 * keeps `"__proto__"` as an own key, so a body that holds one is refused before any code can
 * copy it into another object.
 */
export const RESERVED_RULE_KEYS: readonly string[] = Object.freeze(['__proto__', 'constructor', 'prototype']);

/**
 * Parses the JSON text of a rule set (a file, a Redis key or message, a request body) into the
 * value it holds, which is not yet validated: pass it to `loadRules` or {@link normalizeRuleSet}.
 * @param context - the message's prefix, naming where the text came from.
 * @throws RuleValidationError with one issue at path `''` when the text is not JSON (or not a string).
 * @example
 * fg.loadRules(parseRulesJson(await readFile(path, 'utf8'), `Rules from ${path} rejected`) as RuleSetOptions);
 */
export function parseRulesJson(text: string, context = 'Invalid rules'): unknown {
  if (typeof text !== 'string')
    throw new RuleValidationError([{ path: '', message: `must be JSON text, got ${typeof text}` }], context);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RuleValidationError([{ path: '', message: `is not valid JSON (${(error as Error).message})` }], context);
  }
}

/**
 * The JSON text of a rule set, for a store that sources read back (`FileRuleSource.write`,
 * `publishRules`): validated as every reader will see it, the text parsed back and judged with
 * {@link normalizeRuleSet}. What JSON cannot carry (fields inherited from a prototype,
 * `undefined`, functions, `NaN` written as `null`, a `toJSON()`'s rewrite) is therefore judged as
 * written, and an invalid set is never written.
 * @param space - indentation, as `JSON.stringify` takes it.
 * @throws RuleValidationError listing every problem of the set as written, or naming why it cannot
 * be written as JSON (a cycle, a BigInt).
 */
export function ruleSetJson(rules: unknown, space?: number, context = 'Rules not written'): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(rules, null, space);
  } catch (error) {
    throw new RuleValidationError(
      [{ path: 'rules', message: `cannot be written as JSON (${(error as Error).message})` }],
      context,
    );
  }
  // No text for `undefined` (from JavaScript callers): normalizeRuleSet names the missing object.
  normalizeRuleSet(json === undefined ? undefined : JSON.parse(json));
  return json;
}

/**
 * Validates a rule set (any subset of kinds) and resolves every default, without loading it.
 * Every way rules enter goes through it (see {@link parseRulesJson}). Refused: anything but an
 * object (`null`, an array, a string, a number, a boolean: `rules: must be an object`), a key that
 * is not a kind (`flw: unknown field`), a `__proto__`, `constructor` or `prototype` key at any depth (checked
 * before anything else is read; a hotspot rule's `specificItems` are keyed by parameter value, and
 * keep any key as data), and every problem of every rule, by path (`flow[2].threshold`).
 * @throws RuleValidationError listing every problem, by path.
 * @example
 * const rules = normalizeRuleSet(JSON.parse(text)); // throws before anything is loaded or written
 */
export function normalizeRuleSet(input: unknown): Partial<RuleSet> {
  const reader = new RuleReader();
  const obj = reader.object(input, 'rules');
  if (obj === undefined) reader.throwIfAny();
  const reserved = reservedKeys(obj!);
  if (reserved.length > 0) throw new RuleValidationError(reserved);
  reader.knownKeys(
    obj!,
    RULE_KINDS.map((kind) => kind.key),
    '',
  );
  const result: Partial<Record<RuleKindKey, readonly AnyRule[]>> = {};
  for (const kind of RULE_KINDS) {
    if (obj![kind.key] === undefined) continue;
    const list = reader.array(obj![kind.key], kind.key);
    const normalize: RuleKind['normalize'] = (input, path, r) =>
      (kind as unknown as RuleKind).normalize(input, path, r);
    // The rollout fields (`mode`, `enforcePercent`) are every kind's that refuses anything (API
    // groups refuse nothing): read here, the rest by the kind.
    const rollsOut = Object.keys(kind.codes).length > 0;
    const normalized = list.map((rule, i) => {
      const path = `${kind.key}[${i}]`;
      return Object.freeze(
        rollsOut ? normalizeWithRollout(rule, path, reader, normalize)! : normalize(rule, path, reader)!,
      ) as AnyRule;
    });
    result[kind.key] = Object.freeze(normalized);
  }
  reader.throwIfAny();
  return result as Partial<RuleSet>;
}

/**
 * Fields of a rule whose keys are values, not field names: a hotspot rule's `specificItems` are
 * keyed by parameter value, and a user may be called `constructor`. Their keys are kept as data
 * (the rule copies them as own properties and reads them with `Object.hasOwn`), never refused.
 */
const VALUE_KEYED_FIELDS: readonly string[] = ['specificItems'];

/**
 * Every own key of {@link RESERVED_RULE_KEYS} in `root` and in the objects and arrays it holds,
 * by path, in document order (the keys of {@link VALUE_KEYED_FIELDS} of a rule excepted).
 * Iterative (a deeply nested body cannot overflow the stack), and each object is visited once (a
 * cycle from code ends).
 */
function reservedKeys(root: object): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const seen = new Set<object>();
  // [node, path, depth]: the set is at depth 0, a kind's list at 1, a rule at 2, its fields at 3.
  const stack: [object, string, number][] = [[root, '', 0]];
  while (stack.length > 0) {
    const [node, path, depth] = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    const children: [object, string, number][] = [];
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const value: unknown = node[i];
        if (typeof value === 'object' && value !== null) children.push([value, `${path}[${i}]`, depth + 1]);
      }
    } else {
      const keysAreValues = depth === 3 && VALUE_KEYED_FIELDS.some((field) => path.endsWith(`.${field}`));
      for (const key of Object.keys(node)) {
        if (!keysAreValues && RESERVED_RULE_KEYS.includes(key)) {
          issues.push({
            path: join(path, key),
            message: `is a reserved key (${RESERVED_RULE_KEYS.join(', ')} are refused anywhere in a rule set)`,
          });
          continue;
        }
        const value = (node as Record<string, unknown>)[key];
        if (typeof value === 'object' && value !== null) children.push([value, join(path, key), depth + 1]);
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return issues;
}
