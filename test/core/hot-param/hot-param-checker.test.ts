import { HotParamBlockError } from '@floodgate/core';
import { arg, engineWith, isEntry, passesOf, passesUntilBlocked } from './helpers';

const one = { resource: 'r', threshold: 1 } as const;

describe('hotspot checks: which value is limited', () => {
  it('reads the value from args[paramIndex]', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 1 }]);
    fg.entry('r', { args: ['x', 'u1'] });
    expect(isEntry(fg.tryEntry('r', { args: ['y', 'u1'] }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { args: ['x', 'u2'] }))).toBe(true);
  });

  it('counts a negative paramIndex from the end of args', () => {
    const { fg } = engineWith([{ ...one, paramIndex: -1 }]);
    fg.entry('r', { args: ['x', 'u1'] });
    expect(isEntry(fg.tryEntry('r', { args: ['u1'] }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { args: ['a', 'b', 'u1'] }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { args: ['u1', 'u2'] }))).toBe(true);
  });

  it('does not limit a call whose index is out of range, either way', () => {
    const { fg } = engineWith([
      { ...one, paramIndex: 2 },
      { ...one, paramIndex: -3 },
    ]);
    expect(passesOf(fg, 'r', { args: ['a', 'b'] }, 50)).toBe(50);
  });

  it('reads the value from params[paramKey]', () => {
    const { fg } = engineWith([{ ...one, paramKey: 'userId' }]);
    fg.entry('r', { params: { userId: 'u1' } });
    expect(isEntry(fg.tryEntry('r', { params: { userId: 'u1', other: 1 } }))).toBe(false);
    expect(isEntry(fg.tryEntry('r', { params: { userId: 'u2' } }))).toBe(true);
  });

  it('does not limit a call without params or without the key', () => {
    const { fg } = engineWith([{ ...one, paramKey: 'userId' }]);
    expect(passesOf(fg, 'r', undefined, 20)).toBe(20);
    expect(passesOf(fg, 'r', { params: { other: 'x' } }, 20)).toBe(20);
  });

  it('does not limit undefined or null values', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    expect(passesOf(fg, 'r', arg(undefined), 20)).toBe(20);
    expect(passesOf(fg, 'r', arg(null), 20)).toBe(20);
  });

  it('does not limit objects, symbols or functions, whose identity never repeats across requests', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    const same = { id: 1 };
    expect(passesOf(fg, 'r', arg(same), 20)).toBe(20);
    expect(passesOf(fg, 'r', arg(Symbol.for('s')), 20)).toBe(20);
    expect(
      passesOf(
        fg,
        'r',
        arg(() => 1),
        20,
      ),
    ).toBe(20);
  });

  it('counts numbers, bigints and strings of the same string form as one value', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0, threshold: 3 }]);
    fg.entry('r', arg(42));
    fg.entry('r', arg('42'));
    fg.entry('r', arg(42n));
    expect(isEntry(fg.tryEntry('r', arg(42)))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg(4.2)))).toBe(true);
  });

  it('counts a boolean as its string form', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    fg.entry('r', arg(true));
    expect(isEntry(fg.tryEntry('r', arg('true')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg(false)))).toBe(true);
  });

  it('matches JSON-loaded specific items against numeric arguments', () => {
    const { fg } = engineWith([JSON.parse('{"resource":"r","paramIndex":0,"threshold":1,"specificItems":{"7":3}}')]);
    expect(passesUntilBlocked(fg, 'r', arg(7))).toBe(3);
    expect(passesUntilBlocked(fg, 'r', arg(8))).toBe(1);
  });

  it('checks each element of an array value', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    fg.entry('r', arg(['a', 'b']));
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('b')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg(['c', 'd', null])))).toBe(true);
  });

  it('refuses an array value when one element is over, naming that element', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    fg.entry('r', arg(7));
    expect(fg.tryEntry('r', arg(['c', 7]))).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', value: 7 });
  });

  it('charges no element of a refused array value', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    fg.entry('r', arg('b'));
    expect(isEntry(fg.tryEntry('r', arg(['a', 'c', 'b'])))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('c')))).toBe(true);
  });

  it('charges a value twice when an array repeats it', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0, threshold: 2 }]);
    expect(isEntry(fg.tryEntry('r', arg(['a', 'a', 'a'])))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg(['a', 'a'])))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('passes an empty array value', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0, threshold: 0 }]);
    expect(isEntry(fg.tryEntry('r', arg([])))).toBe(true);
  });

  it('applies every hotspot rule of the resource', () => {
    const { fg } = engineWith([
      { ...one, paramIndex: 0, threshold: 5 },
      { ...one, paramIndex: 1, threshold: 1 },
    ]);
    fg.entry('r', { args: ['u1', 'ip1'] });
    expect(fg.tryEntry('r', { args: ['u1', 'ip1'] })).toMatchObject({ value: 'ip1', rule: { paramIndex: 1 } });
    expect(isEntry(fg.tryEntry('r', { args: ['u1', 'ip2'] }))).toBe(true);
  });

  it('refuses with a HotParamBlockError naming the resource, the rule and the value', () => {
    const { fg } = engineWith([{ ...one, paramKey: 'userId' }]);
    fg.entry('r', { params: { userId: 'u1' }, origin: 'app' });
    const error = fg.tryEntry('r', { params: { userId: 'u1' }, origin: 'app' });
    expect(error).toBeInstanceOf(HotParamBlockError);
    expect(error).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      resource: 'r',
      value: 'u1',
      origin: 'app',
      rule: fg.getRules().hotParams[0],
      message: 'Blocked by a hotspot rule on "r" for value "u1" (params.userId)',
    });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ value: 'u1', code: 'ERR_HOT_PARAM_BLOCKED' });
  });

  it('emits a block event and counts the block in the resource statistics', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }], 1_000);
    const blocked: unknown[] = [];
    fg.on('block', (event) => blocked.push(event.error));
    fg.entry('r', arg('a')).exit();
    fg.tryEntry('r', arg('a'));
    expect(blocked).toEqual([expect.any(HotParamBlockError)]);
    expect(fg.stats('r')).toMatchObject({ lastSecond: { block: 1, pass: 1 } });
  });
});

describe('hotspot checks: long values', () => {
  /** The keys the rule's LRU holds (internal: what the values cost). */
  const keysOf = (fg: ReturnType<typeof engineWith>['fg']): string[] => {
    const state = (
      fg as unknown as {
        resources: Map<string, { rules: { checkers: { cache: { keys(): IterableIterator<string> } }[] } }>;
      }
    ).resources.get('r')!;
    return [...state.rules.checkers[0]!.cache.keys()];
  };

  it('keeps a long value under a key of at most 128 characters, so capacity bounds memory (#12)', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0, capacity: 100 }]);
    for (let i = 0; i < 300; i++) fg.entry('r', arg(`${i}:${'x'.repeat(100_000)}`)).exit();
    const keys = keysOf(fg);
    expect(keys).toHaveLength(100);
    expect(Math.max(...keys.map((key) => key.length))).toBeLessThanOrEqual(128);
  });

  it('still limits each long value on its own', () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    const long = 'y'.repeat(10_000);
    fg.entry('r', arg(`${long}a`)).exit();
    expect(fg.tryEntry('r', arg(`${long}a`))).toBeInstanceOf(HotParamBlockError);
    expect(isEntry(fg.tryEntry('r', arg(`${long}b`)))).toBe(true);
  });

  it("keeps a value spelled as a long value's digest apart from that long value", () => {
    const { fg } = engineWith([{ ...one, paramIndex: 0 }]);
    const long = 'y'.repeat(10_000);
    fg.entry('r', arg(long)).exit();
    const [digest] = keysOf(fg);
    expect(digest!.startsWith('\u0000sha256:')).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg(digest)))).toBe(true);
    expect(fg.tryEntry('r', arg(long))).toBeInstanceOf(HotParamBlockError);
  });

  it('gives a long specific item its threshold', () => {
    const long = 'z'.repeat(500);
    const { fg } = engineWith([{ ...one, paramIndex: 0, specificItems: { [long]: 3 } }]);
    expect(passesUntilBlocked(fg, 'r', arg(long))).toBe(3);
  });
});
