/**
 * Regular expressions from rule sources, run in time linear in the input: a pattern is parsed
 * once into a Thompson NFA and matched by simulating every path at once (one pass over the
 * value, each NFA state visited at most once per character), so no pattern, however written,
 * can backtrack catastrophically on a value a client chose (ReDoS). The syntax is the
 * JavaScript subset such an engine can run, as RE2 (Go, Sentinel-golang's peers) accepts:
 * literals and escapes, `.`, classes (`[a-z]`, `[^...]`, `\d \w \s` and their negations),
 * groups (`(...)`, `(?:...)`, `(?<name>...)`), `|`, the quantifiers `* + ? {n} {n,} {n,m}`
 * (lazy forms accepted: for a yes/no answer they are the same), `^` and `$`. Backreferences,
 * lookaround and word boundaries, which no linear engine runs, are refused by name.
 *
 * A pattern matches a value whole, as Sentinel's `Pattern.matcher(value).matches()`: write
 * `.*sk_.*` to find `sk_` anywhere.
 */

/** Longest pattern accepted, in characters. */
export const MAX_REGEX_LENGTH = 256;
/** Most NFA states a pattern may compile to (counted repeats are expanded: `a{1000}` is 1000). */
export const MAX_REGEX_STATES = 512;
/**
 * Longest value a pattern is run on, in characters: a value longer than this is taken as
 * matching (counted), so the work per value is bounded by `MAX_REGEX_INPUT × MAX_REGEX_STATES`
 * and a client cannot step around a rule by sending a long value.
 */
export const MAX_REGEX_INPUT = 1024;

/** A compiled pattern: `test(value)` tells whether the whole value matches. */
export interface LinearRegex {
  /** The pattern as written. */
  readonly source: string;
  /** Whether letter case is ignored (ASCII and simple case mappings, as JavaScript's `i` flag). */
  readonly ignoreCase: boolean;
  /** Whether the whole of `value` matches; values longer than {@link MAX_REGEX_INPUT} match. */
  test(value: string): boolean;
}

/** A set of UTF-16 code units: sorted inclusive ranges, possibly negated. */
interface CharSet {
  readonly ranges: readonly number[];
  readonly negated: boolean;
}

type Node =
  | { readonly t: 'set'; readonly set: CharSet }
  | { readonly t: 'seq'; readonly items: readonly Node[] }
  | { readonly t: 'alt'; readonly items: readonly Node[] }
  | { readonly t: 'rep'; readonly node: Node; readonly min: number; readonly max: number }
  | { readonly t: 'bol' }
  | { readonly t: 'eol' };

const enum Op {
  Set,
  Split,
  Bol,
  Eol,
  Match,
}

interface State {
  op: Op;
  set: CharSet | undefined;
  out: number;
  out1: number;
}

const DIGIT: CharSet = { ranges: [48, 57], negated: false };
const WORD: CharSet = { ranges: [48, 57, 65, 90, 95, 95, 97, 122], negated: false };
const SPACE: CharSet = {
  ranges: [
    9, 13, 32, 32, 160, 160, 5760, 5760, 8192, 8202, 8232, 8233, 8239, 8239, 8287, 8287, 12288, 12288, 65279, 65279,
  ],
  negated: false,
};
const DOT: CharSet = { ranges: [10, 10, 13, 13, 8232, 8233], negated: true };
const MAX_COUNT = 1000;

/**
 * Compiles `source`, or says why it cannot be run in linear time (or is no pattern at all).
 * @example
 * const key = compileLinearRegex('sk_(live|test)_[0-9a-z]{24}');
 * typeof key !== 'string' && key.test('sk_live_abcdefghijklmnopqrstuvwx'); // true
 */
export function compileLinearRegex(source: string, ignoreCase = false): LinearRegex | string {
  if (typeof source !== 'string') return `must be a string, got ${typeof source}`;
  if (source.length > MAX_REGEX_LENGTH)
    return `is ${source.length} characters long; at most ${MAX_REGEX_LENGTH} are accepted`;
  const states: State[] = [];
  let start: number;
  try {
    const ast = new Parser(source).parse();
    start = compileNode(ast, states, push(states, Op.Match, undefined, -1, -1));
  } catch (error) {
    if (error instanceof TooLarge)
      return `is too large once its repeats are expanded (more than ${MAX_REGEX_STATES} states)`;
    if (error instanceof PatternError) return error.message;
    throw error;
  }
  return new Machine(source, ignoreCase, states, start);
}

class PatternError extends Error {}
class TooLarge extends Error {}

function push(states: State[], op: Op, set: CharSet | undefined, out: number, out1: number): number {
  if (states.length >= MAX_REGEX_STATES) throw new TooLarge();
  states.push({ op, set, out, out1 });
  return states.length - 1;
}

/** Builds `node` in front of `next`, returning its first state (states are built back to front). */
function compileNode(node: Node, states: State[], next: number): number {
  switch (node.t) {
    case 'set':
      return push(states, Op.Set, node.set, next, -1);
    case 'bol':
      return push(states, Op.Bol, undefined, next, -1);
    case 'eol':
      return push(states, Op.Eol, undefined, next, -1);
    case 'seq': {
      let at = next;
      for (let i = node.items.length - 1; i >= 0; i--) at = compileNode(node.items[i]!, states, at);
      return at;
    }
    case 'alt': {
      let at = compileNode(node.items[node.items.length - 1]!, states, next);
      for (let i = node.items.length - 2; i >= 0; i--)
        at = push(states, Op.Split, undefined, compileNode(node.items[i]!, states, next), at);
      return at;
    }
    case 'rep': {
      let at = next;
      if (node.max === Infinity) {
        // A loop: a split that enters the body (which returns to the split) or leaves.
        const loop = push(states, Op.Split, undefined, -1, next);
        states[loop]!.out = compileNode(node.node, states, loop);
        at = loop;
      } else {
        // `x{2,4}` is `xx(x(x)?)?`: each optional copy may skip straight to the end.
        for (let i = node.min; i < node.max; i++)
          at = push(states, Op.Split, undefined, compileNode(node.node, states, at), next);
      }
      for (let i = 0; i < node.min; i++) at = compileNode(node.node, states, at);
      return at;
    }
  }
}

class Parser {
  private pos = 0;

  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.src.length) throw this.fail(`unmatched ')' at ${this.pos}`);
    return node;
  }

  private fail(message: string): PatternError {
    return new PatternError(`is not a pattern the linear-time engine runs: ${message}`);
  }

  private alternation(): Node {
    const items = [this.sequence()];
    while (this.src[this.pos] === '|') {
      this.pos++;
      items.push(this.sequence());
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.pos < this.src.length && this.src[this.pos] !== '|' && this.src[this.pos] !== ')') {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  private quantified(atom: Node): Node {
    const c = this.src[this.pos];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(this.src.slice(this.pos));
      if (m === null) throw this.fail(`'{' at ${this.pos} starts no quantifier (write \\{ for a brace)`);
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT))
        throw this.fail(`a count above ${MAX_COUNT} at ${this.pos}`);
      if (max < min) throw this.fail(`numbers out of order in quantifier at ${this.pos}`);
      this.pos += m[0].length - 1;
    } else return atom;
    if (atom.t === 'bol' || atom.t === 'eol') throw this.fail(`nothing to repeat at ${this.pos}`);
    this.pos++;
    if (this.src[this.pos] === '?') this.pos++;
    const next = this.src[this.pos];
    if (next === '*' || next === '+' || next === '?' || next === '{')
      throw this.fail(`nothing to repeat at ${this.pos}`);
    return { t: 'rep', node: atom, min, max };
  }

  private atom(): Node {
    const c = this.src[this.pos]!;
    switch (c) {
      case '(':
        return this.group();
      case '[':
        return { t: 'set', set: this.charClass() };
      case '.':
        this.pos++;
        return { t: 'set', set: DOT };
      case '^':
        this.pos++;
        return { t: 'bol' };
      case '$':
        this.pos++;
        return { t: 'eol' };
      case '\\':
        return { t: 'set', set: this.escape() };
      case '*':
      case '+':
      case '?':
        throw this.fail(`nothing to repeat at ${this.pos}`);
      case '{':
      case '}':
      case ']':
        throw this.fail(`'${c}' at ${this.pos} must be escaped (\\${c})`);
      default: {
        const code = this.src.charCodeAt(this.pos);
        this.pos++;
        return { t: 'set', set: { ranges: [code, code], negated: false } };
      }
    }
  }

  private group(): Node {
    this.pos++;
    if (this.src[this.pos] === '?') {
      const rest = this.src.slice(this.pos + 1);
      if (rest.startsWith(':')) this.pos += 2;
      else if (/^<[A-Za-z_$][\w$]*>/.test(rest)) this.pos += 1 + rest.indexOf('>') + 1;
      else if (/^(=|!|<=|<!)/.test(rest))
        throw this.fail(`lookaround at ${this.pos - 1} (no linear-time engine runs it)`);
      else throw this.fail(`unknown group syntax at ${this.pos - 1}`);
    }
    const node = this.alternation();
    if (this.src[this.pos] !== ')') throw this.fail(`unclosed '(' (missing ')')`);
    this.pos++;
    return node;
  }

  private charClass(): CharSet {
    const start = this.pos;
    this.pos++;
    let negated = false;
    if (this.src[this.pos] === '^') {
      negated = true;
      this.pos++;
    }
    const ranges: number[] = [];
    while (this.src[this.pos] !== ']') {
      if (this.pos >= this.src.length) throw this.fail(`unclosed '[' at ${start}`);
      const low = this.classAtom();
      if (this.src[this.pos] === '-' && this.src[this.pos + 1] !== ']' && this.pos + 1 < this.src.length) {
        this.pos++;
        const high = this.classAtom();
        if (typeof low !== 'number' || typeof high !== 'number') throw this.fail(`a range of a class at ${start}`);
        if (high < low) throw this.fail(`range out of order in class at ${start}`);
        ranges.push(low, high);
      } else if (typeof low === 'number') ranges.push(low, low);
      else ranges.push(...expand(low));
    }
    this.pos++;
    return { ranges: normalizeRanges(ranges), negated };
  }

  /** One member of a class: a code unit, or a class escape (`\d`). */
  private classAtom(): number | CharSet {
    if (this.src[this.pos] === '\\') {
      if (this.src[this.pos + 1] === 'b') {
        this.pos += 2;
        return 8;
      }
      const set = this.escape();
      return !set.negated && set.ranges.length === 2 && set.ranges[0] === set.ranges[1] ? set.ranges[0]! : set;
    }
    const code = this.src.charCodeAt(this.pos);
    this.pos++;
    return code;
  }

  private escape(): CharSet {
    const at = this.pos;
    const c = this.src[this.pos + 1];
    if (c === undefined) throw this.fail('a pattern ending in \\');
    this.pos += 2;
    const one = (code: number): CharSet => ({ ranges: [code, code], negated: false });
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return { ...DIGIT, negated: true };
      case 'w':
        return WORD;
      case 'W':
        return { ...WORD, negated: true };
      case 's':
        return SPACE;
      case 'S':
        return { ...SPACE, negated: true };
      case 't':
        return one(9);
      case 'n':
        return one(10);
      case 'v':
        return one(11);
      case 'f':
        return one(12);
      case 'r':
        return one(13);
      case '0':
        if (/[0-9]/.test(this.src[this.pos] ?? '')) throw this.fail(`an octal escape at ${at}`);
        return one(0);
      case 'x': {
        const hex = /^[0-9A-Fa-f]{2}/.exec(this.src.slice(this.pos))?.[0];
        if (hex === undefined) throw this.fail(`\\x at ${at} needs two hex digits`);
        this.pos += 2;
        return one(parseInt(hex, 16));
      }
      case 'u': {
        const hex = /^[0-9A-Fa-f]{4}/.exec(this.src.slice(this.pos))?.[0];
        if (hex === undefined) throw this.fail(`\\u at ${at} needs four hex digits`);
        this.pos += 4;
        return one(parseInt(hex, 16));
      }
      case 'b':
      case 'B':
        throw this.fail(`a word boundary (\\${c}) at ${at}`);
      case 'k':
        throw this.fail(`a backreference (\\k) at ${at} (no linear-time engine runs it)`);
      case 'p':
      case 'P':
      case 'c':
        throw this.fail(`\\${c} at ${at} is not supported`);
      default:
        if (/[1-9]/.test(c)) throw this.fail(`a backreference (\\${c}) at ${at} (no linear-time engine runs it)`);
        if (/[A-Za-z0-9_]/.test(c)) throw this.fail(`unknown escape \\${c} at ${at}`);
        return one(c.charCodeAt(0));
    }
  }
}

/** The ranges of a class escape inside a class (`[\d_]`): a negated escape as its complement. */
function expand(set: CharSet): number[] {
  if (!set.negated) return [...set.ranges];
  const out: number[] = [];
  let low = 0;
  for (let i = 0; i < set.ranges.length; i += 2) {
    if (set.ranges[i]! > low) out.push(low, set.ranges[i]! - 1);
    low = set.ranges[i + 1]! + 1;
  }
  if (low <= 0xffff) out.push(low, 0xffff);
  return out;
}

function normalizeRanges(ranges: number[]): number[] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i]!, ranges[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [low, high] of pairs) {
    if (out.length > 0 && low <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, high);
    else out.push(low, high);
  }
  return out;
}

function inRanges(ranges: readonly number[], code: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (code < ranges[i]!) return false;
    if (code <= ranges[i + 1]!) return true;
  }
  return false;
}

/** The NFA and its simulation: two state lists swapped per character, each state added once per step. */
class Machine implements LinearRegex {
  private readonly marks: Int32Array;
  private readonly current: Int32Array;
  private readonly next: Int32Array;
  private readonly stack: Int32Array;
  private generation = 0;

  constructor(
    readonly source: string,
    readonly ignoreCase: boolean,
    private readonly states: readonly State[],
    private readonly start: number,
  ) {
    const n = states.length;
    this.marks = new Int32Array(n);
    this.current = new Int32Array(n);
    this.next = new Int32Array(n);
    this.stack = new Int32Array(n * 2 + 2);
  }

  test(value: string): boolean {
    const length = value.length;
    if (length > MAX_REGEX_INPUT) return true;
    let current = this.current;
    let next = this.next;
    this.step();
    let count = this.addAll(current, 0, this.start, 0, length);
    for (let pos = 0; pos < length && count > 0; pos++) {
      const code = value.charCodeAt(pos);
      this.step();
      let nextCount = 0;
      for (let i = 0; i < count; i++) {
        const state = this.states[current[i]!]!;
        if (state.op === Op.Set && this.accepts(state.set!, code))
          nextCount = this.addAll(next, nextCount, state.out, pos + 1, length);
      }
      [current, next] = [next, current];
      count = nextCount;
    }
    for (let i = 0; i < count; i++) if (this.states[current[i]!]!.op === Op.Match) return true;
    return false;
  }

  /** A new mark for the states added in this step (wrapping, with the marks cleared, long before it could overflow). */
  private step(): void {
    this.generation = (this.generation + 1) & 0x3fffffff;
    if (this.generation === 0) {
      this.marks.fill(0);
      this.generation = 1;
    }
  }

  /** Whether the class takes `code`; ignoring case, the class's ranges are tried with each case of it, then negated. */
  private accepts(set: CharSet, code: number): boolean {
    if (!this.ignoreCase) return inRanges(set.ranges, code) !== set.negated;
    let found = inRanges(set.ranges, code);
    if (!found) {
      const char = String.fromCharCode(code);
      const lower = char.toLowerCase();
      const upper = char.toUpperCase();
      found =
        (lower.length === 1 && inRanges(set.ranges, lower.charCodeAt(0))) ||
        (upper.length === 1 && inRanges(set.ranges, upper.charCodeAt(0)));
    }
    return found !== set.negated;
  }

  /** Adds `from` and every state reachable from it without reading a character (position `pos`). */
  private addAll(list: Int32Array, count: number, from: number, pos: number, length: number): number {
    const marks = this.marks;
    const stack = this.stack;
    const generation = this.generation;
    let top = 0;
    stack[top++] = from;
    while (top > 0) {
      const at = stack[--top]!;
      if (at < 0 || marks[at] === generation) continue;
      marks[at] = generation;
      const state = this.states[at]!;
      switch (state.op) {
        case Op.Split:
          stack[top++] = state.out1;
          stack[top++] = state.out;
          break;
        case Op.Bol:
          if (pos === 0) stack[top++] = state.out;
          break;
        case Op.Eol:
          if (pos === length) stack[top++] = state.out;
          break;
        default:
          list[count++] = at;
      }
    }
    return count;
  }
}
