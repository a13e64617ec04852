import {
  MAX_DURATION_MS,
  MAX_RESOURCE_NAME_LENGTH,
  RuleReader,
  show,
} from '../../../packages/core/src/kernel/rule-reader';

describe('show', () => {
  it('cuts a long string after 60 characters, saying how much was cut (#12)', () => {
    const shown = show('x'.repeat(10_000_000));
    expect(shown).toBe(`"${'x'.repeat(60)}"… (10000000 characters, 9999940 cut)`);
  });

  it('shows short values whole', () => {
    expect(show('throttle')).toBe('"throttle"');
    expect(show(2.5)).toBe('2.5');
    expect(show(null)).toBe('null');
    expect(show(undefined)).toBe('undefined');
    expect(show({ a: 1 })).toBe('an object {"a":1}');
    expect(show([1, 2])).toBe('an array [1,2]');
    expect(show(() => 1)).toBe('a function');
    expect(show(10n)).toBe('10n');
  });

  it('shows a symbol by its description', () => {
    expect(show(Symbol())).toBe('Symbol()');
    expect(show(Symbol('id'))).toBe('Symbol(id)');
  });

  it('cuts a long object or array', () => {
    expect(show(Array.from({ length: 1000 }, () => 1))).toBe(
      `an array [${'1,'.repeat(29)}1… (2001 characters, 1941 cut)`,
    );
  });

  it('says "an array" for an array nested too deep to print, and "an object" for a cyclic object (#12)', () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(show(deep)).toBe('an array');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(show(cyclic)).toBe('an object');
  });
});

describe('RuleReader', () => {
  it('refuses a resource name longer than MAX_RESOURCE_NAME_LENGTH (#12)', () => {
    const reader = new RuleReader();
    reader.resource({ resource: 'x'.repeat(MAX_RESOURCE_NAME_LENGTH) }, 'resource', 'flow[0]');
    expect(reader.issues).toEqual([]);
    reader.resource({ resource: 'x'.repeat(MAX_RESOURCE_NAME_LENGTH + 1) }, 'resource', 'flow[0]');
    expect(reader.issues).toEqual([
      {
        path: 'flow[0].resource',
        message: expect.stringMatching(/^must be at most 1024 characters, got "x+"… \(1025 characters, 965 cut\)$/),
      },
    ]);
  });

  it.each<[string, unknown]>([
    ['a string', '2'],
    ['a boolean', true],
    ['an array', [3]],
    ['a fraction', 1.5],
    ['an unsafe integer', 2 ** 53],
  ])('refuses a count that is %s (#12)', (_what, value) => {
    const reader = new RuleReader();
    reader.number({ n: value }, 'n', 'rule', { min: 0, integer: true });
    expect(reader.issues).toEqual([{ path: 'rule.n', message: `must be a safe integer >= 0, got ${show(value)}` }]);
  });

  it('refuses a duration no timer can hold', () => {
    const reader = new RuleReader();
    const DURATION = { above: 0, max: MAX_DURATION_MS };
    reader.number({ ms: MAX_DURATION_MS }, 'ms', 'rule', DURATION);
    reader.number({ ms: MAX_DURATION_MS + 1 }, 'ms', 'rule', DURATION);
    expect(reader.issues).toEqual([
      { path: 'rule.ms', message: `must be a finite number > 0 and <= ${MAX_DURATION_MS}, got ${MAX_DURATION_MS + 1}` },
    ]);
  });
});
