import fc from 'fast-check';
import { Floodgate, RuleValidationError } from '@floodgate/core';
import { normalizeRuleSet, parseRulesJson, ruleSetJson } from '@floodgate/core/rules';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

const issuesOf = (input: unknown): unknown => {
  try {
    normalizeRuleSet(input);
  } catch (error) {
    if (error instanceof RuleValidationError) return error.issues;
    throw error;
  }
  throw new Error('accepted');
};

const reserved = (path: string) => ({ path, message: expect.stringContaining('is a reserved key') });

describe('normalizeRuleSet', () => {
  it.each([
    ['null', null, 'null'],
    ['an array', [], 'an array []'],
    ['a number', 5, '5'],
    ['a boolean', true, 'true'],
    ['a string', 'str', '"str"'],
    ['undefined', undefined, 'undefined'],
  ])('refuses %s as a rule set, naming it', (_name, input, shown) => {
    expect(issuesOf(input)).toEqual([{ path: 'rules', message: `must be an object, got ${shown}` }]);
  });

  it('refuses an own __proto__ key at the top, as JSON.parse keeps it', () => {
    expect(issuesOf(JSON.parse('{"__proto__": {"flow": []}}'))).toEqual([reserved('__proto__')]);
  });

  it('refuses constructor and prototype keys at the top', () => {
    expect(issuesOf({ constructor: {}, prototype: [] })).toEqual([reserved('constructor'), reserved('prototype')]);
  });

  it('refuses a reserved key nested in a rule, in its items, or in an array, by path', () => {
    const input = JSON.parse(
      '{"flow":[{"resource":"a","threshold":1},{"resource":"b","threshold":1,"__proto__":{"threshold":0}}],' +
        '"hotParams":[{"resource":"c","paramIndex":0,"threshold":1,"cluster":{"constructor":1}}],' +
        '"authority":[{"resource":"d","origins":[{"prototype":1}]}]}',
    );
    expect(issuesOf(input)).toEqual([
      reserved('flow[1].__proto__'),
      reserved('hotParams[0].cluster.constructor'),
      reserved('authority[0].origins[0].prototype'),
    ]);
  });

  it("keeps a hotspot rule's specific items keyed __proto__ or constructor: they are parameter values", () => {
    const [rule] = normalizeRuleSet(
      JSON.parse(
        '{"hotParams":[{"resource":"c","paramIndex":0,"threshold":1,"specificItems":{"__proto__":2,"constructor":3}}]}',
      ),
    ).hotParams!;
    expect(Object.keys(rule!.specificItems)).toEqual(['__proto__', 'constructor']);
    expect(
      issuesOf(
        JSON.parse(
          '{"hotParams":[{"resource":"c","paramIndex":0,"threshold":1,"specificItems":{"a":{"__proto__":1}}}]}',
        ),
      ),
    ).toEqual([reserved('hotParams[0].specificItems.a.__proto__')]);
  });

  it('refuses a reserved key before reading anything else: no other issue is listed', () => {
    expect(issuesOf(JSON.parse('{"flw": [], "flow": [{"__proto__": 1}]}'))).toEqual([reserved('flow[0].__proto__')]);
  });

  it('names an unknown top-level key', () => {
    expect(issuesOf({ flw: [] })).toEqual([
      { path: 'flw', message: expect.stringContaining('unknown field (allowed: authority, system') },
    ]);
  });

  it('walks a deeply nested body without overflowing the stack, and a cycle from code ends', () => {
    const deep = JSON.parse(`{"flow":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}`);
    expect(issuesOf(deep)).toEqual([{ path: 'flow[0]', message: expect.stringContaining('must be an object') }]);
    const cycle: Record<string, unknown> = { resource: 'a', threshold: 1 };
    cycle.self = cycle;
    expect(issuesOf({ flow: [cycle] })).toEqual([{ path: 'flow[0].self', message: expect.any(String) }]);
  });

  it(
    'refuses every rule set holding a reserved key anywhere, naming where, whatever else it holds',
    () => {
      fc.assert(
        fc.property(
          fc.jsonValue({ maxDepth: 4 }),
          fc.nat(),
          fc.constantFrom('__proto__', 'constructor', 'prototype'),
          (value, pick, key) => {
            const root = JSON.parse(JSON.stringify({ flow: [value] })) as object;
            const objects = objectsIn(root);
            const [node, path] = objects[pick % objects.length]!;
            // An own property, as JSON.parse makes one, even for __proto__.
            Object.defineProperty(node, key, { value: 1, enumerable: true, writable: true, configurable: true });
            const issues = issuesOf(root) as { path: string }[];
            expect(issues).toContainEqual(reserved(path === '' ? key : `${path}.${key}`));
          },
        ),
        propertyRuns(300),
      );
    },
    propertyTimeoutMs(300),
  );
});

/** Every plain object in `root` (arrays excluded), with its path as issues name it. */
function objectsIn(root: object): [object, string][] {
  const out: [object, string][] = [];
  const visit = (node: unknown, path: string): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) return node.forEach((child, i) => visit(child, `${path}[${i}]`));
    out.push([node, path]);
    for (const [k, child] of Object.entries(node)) visit(child, path === '' ? k : `${path}.${k}`);
  };
  visit(root, '');
  return out;
}

describe('parseRulesJson', () => {
  it('gives the value the text holds, not yet validated', () => {
    expect(parseRulesJson('null')).toBeNull();
    expect(parseRulesJson('{"flow":[]}')).toEqual({ flow: [] });
  });

  it('refuses text that is not JSON with one issue of the whole rule set, in the given context', () => {
    expect(() => parseRulesJson('{"flow": [', 'Rules from x rejected')).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^Rules from x rejected: : is not valid JSON/),
        issues: [{ path: '', message: expect.stringContaining('is not valid JSON') }],
      }),
    );
  });
});

describe('ruleSetJson', () => {
  it('writes a valid set as JSON, and refuses what its JSON makes invalid', () => {
    expect(ruleSetJson({ flow: [{ resource: 'a', threshold: 1 }] })).toBe('{"flow":[{"resource":"a","threshold":1}]}');
    expect(() => ruleSetJson({ flow: [{ resource: 'a', threshold: Number.NaN }] })).toThrow(
      'flow[0].threshold: must be a finite number >= 0, got null',
    );
    expect(() => ruleSetJson(undefined)).toThrow('rules: must be an object, got undefined');
  });
});

describe('loadRules options.replaces', () => {
  it('empties each kind listed that the set lacks, in one step', () => {
    const fg = new Floodgate();
    fg.loadRules({
      flow: [{ resource: 'a', threshold: 1 }],
      circuitBreakers: [{ resource: 'a', strategy: 'errorCount', threshold: 1, retryTimeoutMs: 1000 }],
      authority: [{ resource: 'a', origins: ['x'] }],
    });
    const loaded: string[][] = [];
    fg.on('rulesLoaded', ({ kinds }) => loaded.push([...kinds]));
    const set = fg.loadRules({ flow: [{ resource: 'b', threshold: 2 }] }, { replaces: ['flow', 'circuitBreakers'] });
    expect(Object.keys(set)).toEqual(['flow']);
    expect(fg.getRules().circuitBreakers).toEqual([]);
    expect(fg.getRules().authority).toHaveLength(1);
    expect(loaded).toEqual([['flow', 'circuitBreakers']]);
  });

  it('empties nothing when the set is refused', () => {
    const fg = new Floodgate();
    fg.loadRules({ flow: [{ resource: 'a', threshold: 1 }] });
    expect(() => fg.loadRules(null as never, { replaces: ['flow'] })).toThrow('rules: must be an object, got null');
    expect(fg.getRules().flow).toHaveLength(1);
  });

  it('refuses a kind that is not one, naming the kinds', () => {
    expect(() => new Floodgate().loadRules({}, { replaces: ['flw' as never] })).toThrow(
      'loadRules options.replaces must be an array of rule kinds (authority, system, pushback, hotParams, flow, adaptiveThrottling, retryBudgets, circuitBreakers, apiGroups), got an array ["flw"]',
    );
  });
});
