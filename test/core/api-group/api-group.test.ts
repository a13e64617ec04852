import { Floodgate, RuleValidationError } from '@floodgate/core';
import { normalizeRuleSet } from '@floodgate/core/rules';
import { requestPath } from '@floodgate/core/http';
import { ApiGroupMatcher } from '../../../packages/core/src/api-group/api-group';

function issuesOf(group: unknown): string[] {
  try {
    normalizeRuleSet({ apiGroups: [group] });
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return (error as RuleValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error('no RuleValidationError');
}

const matcher = (patterns: unknown[]) =>
  new ApiGroupMatcher(normalizeRuleSet({ apiGroups: [{ name: 'g', patterns }] }).apiGroups![0]!);
const inGroup = (m: ApiGroupMatcher, method: string, url: string, caseSensitive = false) => {
  const path = requestPath(url);
  return m.matches(method, path, caseSensitive ? undefined : path.toLowerCase());
};

describe('API groups', () => {
  it('validate to their name and patterns, a regex pattern’s method resolved', () => {
    expect(
      normalizeRuleSet({ apiGroups: [{ name: 'checkout', patterns: ['POST /cart/*', { regex: '/orders/[0-9]+' }] }] })
        .apiGroups,
    ).toEqual([{ name: 'checkout', patterns: ['POST /cart/*', { method: '*', regex: '/orders/[0-9]+' }] }]);
  });

  it('refuse bad patterns, naming each', () => {
    expect(issuesOf({ name: 'g', patterns: ['GTE /x', { method: 'FETCH', regex: '(a)\\1' }, 7], extra: 1 })).toEqual([
      'apiGroups[0].extra: unknown field (allowed: name, patterns)',
      expect.stringContaining('apiGroups[0].patterns[0]: is not a valid route pattern: method "GTE"'),
      'apiGroups[0].patterns[1].method: must be an HTTP method or \'*\', got "FETCH"',
      expect.stringContaining('apiGroups[0].patterns[1].regex: is not a pattern the linear-time engine runs'),
      'apiGroups[0].patterns[2]: must be an object, got 7',
    ]);
    expect(issuesOf({ name: 'g', patterns: [] })).toEqual(['apiGroups[0].patterns: must list at least one pattern']);
    expect(issuesOf({ patterns: ['/x'] })).toEqual(['apiGroups[0].name: is required (a non-empty string)']);
  });

  it('match every spelling of their route patterns, HEAD as GET', () => {
    const m = matcher(['POST /cart/*', 'GET /orders/:id']);
    expect(inGroup(m, 'POST', '/cart')).toBe(true);
    expect(inGroup(m, 'POST', '//CART/%61/b/?x=1')).toBe(true);
    expect(inGroup(m, 'HEAD', '/orders/7')).toBe(true);
    expect(inGroup(m, 'GET', '/orders/7/x')).toBe(false);
    expect(inGroup(m, 'GET', '/cart/a')).toBe(false);
    expect(inGroup(m, 'POST', '/CART/a', true)).toBe(false);
  });

  it('match a regex over the whole path as patterns read it, in the framework’s letter case', () => {
    const m = matcher([{ method: 'GET', regex: '/api/v[0-9]+/orders' }]);
    expect(inGroup(m, 'GET', '/api/v2/orders')).toBe(true);
    expect(inGroup(m, 'GET', '/api/v2//%6Frders/')).toBe(true);
    expect(inGroup(m, 'GET', '/API/V2/ORDERS')).toBe(true);
    expect(inGroup(m, 'GET', '/API/V2/ORDERS', true)).toBe(false);
    expect(inGroup(m, 'HEAD', '/api/v2/orders')).toBe(true);
    expect(inGroup(m, 'POST', '/api/v2/orders')).toBe(false);
    expect(inGroup(m, 'GET', '/api/v2/orders/1')).toBe(false);
  });

  it('load over groups declared in code with the same name, and removing them restores the declared', () => {
    const fg = new Floodgate();
    fg.declareRules({ apiGroups: [{ name: 'checkout', patterns: ['POST /orders'] }] });
    fg.loadRules({ apiGroups: [{ name: 'checkout', patterns: ['POST /cart/*'] }] });
    expect(fg.getRules().apiGroups).toEqual([{ name: 'checkout', patterns: ['POST /cart/*'] }]);
    expect(fg.describeRules().map((d) => [d.kind, d.resource, d.layer, d.inForce])).toEqual([
      ['apiGroups', 'checkout', 'loaded', true],
      ['apiGroups', 'checkout', 'declared', false],
    ]);
    fg.loadRules({ apiGroups: [] });
    expect(fg.getRules().apiGroups).toEqual([{ name: 'checkout', patterns: ['POST /orders'] }]);
  });
});
