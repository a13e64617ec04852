import fc from 'fast-check';
import { compileLinearRegex, MAX_REGEX_INPUT, MAX_REGEX_LENGTH, type LinearRegex } from '@floodgate/core/http';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

const compiled = (source: string, ignoreCase = false): LinearRegex => {
  const regex = compileLinearRegex(source, ignoreCase);
  if (typeof regex === 'string') throw new Error(`${source} ${regex}`);
  return regex;
};

/** Random patterns of the subset, built from pieces JavaScript and the linear engine both read alike. */
const atom: fc.Arbitrary<string> = fc.constantFrom(
  'a',
  'b',
  'c',
  '.',
  '[ab]',
  '[^a]',
  '\\d',
  '\\w',
  '[a-c0-2]',
  'x',
  '\\.',
);
const pattern: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('node'), fc.constantFrom('*', '+', '?', '{2}', '{0,2}', '{1,}', '*?')).map(([n, q]) => `(?:${n})${q}`),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => `${a}${b}`),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => `(${a}|${b})`),
  ),
})).node;
const subject = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'x', '1', '.', '_', 'A'), maxLength: 12 });

describe('compileLinearRegex', () => {
  it('matches whole values, as Java’s matches()', () => {
    expect(compiled('sk_[a-z]+').test('sk_abc')).toBe(true);
    expect(compiled('sk_[a-z]+').test('xsk_abc')).toBe(false);
    expect(compiled('sk_[a-z]+').test('sk_abc!')).toBe(false);
    expect(compiled('.*sk_.*').test('Bearer sk_1')).toBe(true);
    expect(compiled('(live|test)_\\d{2,3}').test('test_123')).toBe(true);
    expect(compiled('(live|test)_\\d{2,3}').test('test_1234')).toBe(false);
    expect(compiled('^a$').test('a')).toBe(true);
    expect(compiled('(?<env>live)?x').test('x')).toBe(true);
  });

  it('ignores letter case when asked', () => {
    expect(compiled('/api/[a-z]+', true).test('/API/Orders')).toBe(true);
    expect(compiled('/api/[a-z]+').test('/API/Orders')).toBe(false);
  });

  it.each([
    ['(?=a)a', 'lookaround'],
    ['(?<!a)b', 'lookaround'],
    ['(a)\\1', 'backreference'],
    ['\\k<n>', 'backreference'],
    ['\\bword', 'word boundary'],
    ['a**', 'nothing to repeat'],
    ['(a', "unclosed '('"],
    ['a)', "unmatched ')'"],
    ['[b-a]', 'range out of order'],
    ['a{2,1}', 'out of order'],
    ['a{1001}', 'a count above 1000'],
    ['(?:a{300}){2}', 'too large'],
    ['a{', 'starts no quantifier'],
    ['}', 'must be escaped'],
  ])('refuses %s, naming why (%s)', (source, why) => {
    expect(compileLinearRegex(source)).toEqual(expect.stringContaining(why));
  });

  it('refuses a pattern longer than the bound', () => {
    expect(compileLinearRegex('a'.repeat(MAX_REGEX_LENGTH + 1))).toEqual(expect.stringContaining('at most 256'));
  });

  it('runs patterns that backtrack catastrophically in JavaScript on long values', () => {
    // Each of these takes JavaScript's engine exponential time on the value; here one pass.
    for (const source of ['(a+)+b', '(a|aa)*b', '(a|a?)+b', '(\\w+\\s?)+!', '(.*a){10}b'])
      expect(compiled(source).test('a'.repeat(MAX_REGEX_INPUT - 1))).toBe(false);
  });

  it('counts a value longer than the input bound as matching, so a long value never escapes a rule', () => {
    expect(compiled('sk_[a-z]+').test('x'.repeat(MAX_REGEX_INPUT + 1))).toBe(true);
  });

  it(
    'agrees with JavaScript’s own engine on every pattern of the subset',
    () => {
      fc.assert(
        fc.property(pattern, subject, fc.boolean(), (source, value, ignoreCase) => {
          const ours = compiled(source, ignoreCase).test(value);
          const theirs = new RegExp(`^(?:${source})$`, ignoreCase ? 'i' : '').test(value);
          if (ours !== theirs)
            throw new Error(`${source} on ${JSON.stringify(value)}: ours ${ours}, JavaScript ${theirs}`);
        }),
        propertyRuns(500),
      );
    },
    propertyTimeoutMs(500),
  );
});
