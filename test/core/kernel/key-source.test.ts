import { RuleValidationError } from '@floodgate/core';
import { normalizeRuleSet } from '@floodgate/core/rules';
import { keySourceId } from '@floodgate/core/http';

/** The issues of a hotspot rule with `key`, as `path: message` lines. */
function issuesOf(key: unknown): string[] {
  try {
    normalizeRuleSet({ hotParams: [{ resource: 'GET /users/:id', threshold: 5, key }] });
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return (error as RuleValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error('no RuleValidationError');
}

const keyOf = (key: unknown) =>
  normalizeRuleSet({ hotParams: [{ resource: 'r', threshold: 1, key }] }).hotParams![0]!.key;

describe('key sources', () => {
  it('resolves a client address source to its IPv6 grouping', () => {
    expect(keyOf({ from: 'ip' })).toEqual({ from: 'ip', ipv6Subnet: 56 });
    expect(keyOf({ from: 'ip', ipv6Subnet: false })).toEqual({ from: 'ip', ipv6Subnet: false });
  });

  it('writes header names in lower case, so any spelling reads the same header', () => {
    expect(keyOf({ from: 'header', name: 'X-Api-Key' })).toEqual({ from: 'header', name: 'x-api-key' });
  });

  it('keeps a match', () => {
    expect(keyOf({ from: 'cookie', name: 'sid', match: { strategy: 'prefix', pattern: 's_' } })).toEqual({
      from: 'cookie',
      name: 'sid',
      match: { strategy: 'prefix', pattern: 's_' },
    });
  });

  it('names each source by one id', () => {
    expect(keySourceId({ from: 'ip', ipv6Subnet: 56 })).toBe('ip/56');
    expect(keySourceId({ from: 'ip', ipv6Subnet: false })).toBe('ip/all');
    expect(keySourceId({ from: 'host' })).toBe('host');
    expect(keySourceId({ from: 'header', name: 'x-api-key' })).toBe('header:x-api-key');
    expect(keySourceId({ from: 'user', name: 'org.id' })).toBe('user:org.id');
  });

  it('refuses an unknown source and unknown fields', () => {
    expect(issuesOf({ from: 'body', nam: 'x' })).toEqual([
      'hotParams[0].key.nam: unknown field (allowed: from, name, ipv6Subnet, match)',
      "hotParams[0].key.from: must be one of 'ip', 'host', 'header', 'query', 'cookie', 'param', 'user', got \"body\"",
    ]);
  });

  it('requires a name where one is read, and refuses one where none is', () => {
    expect(issuesOf({ from: 'query' })).toEqual(['hotParams[0].key.name: is required: a query name']);
    expect(issuesOf({ from: 'host', name: 'h' })).toEqual([
      "hotParams[0].key.name: is not read from 'host': give it only for header, query, cookie, param, user",
    ]);
  });

  it('refuses a header name that is no header name, a dotted path with an empty part, a long name', () => {
    expect(issuesOf({ from: 'header', name: 'x api' })).toEqual([
      'hotParams[0].key.name: must be a header name (letters, digits and !#$%&\'*+.^_`|~-), got "x api"',
    ]);
    expect(issuesOf({ from: 'user', name: 'org..id' })).toEqual([
      'hotParams[0].key.name: must be a property name or a dotted path (\'org.id\'), got "org..id"',
    ]);
    expect(issuesOf({ from: 'cookie', name: 'c'.repeat(257) })).toEqual([
      'hotParams[0].key.name: must be at most 256 characters, got 257',
    ]);
  });

  it('refuses ipv6Subnet out of range or off a client address source', () => {
    expect(issuesOf({ from: 'ip', ipv6Subnet: 129 })).toEqual([
      'hotParams[0].key.ipv6Subnet: must be an integer within [1, 128] or false, got 129',
    ]);
    expect(issuesOf({ from: 'host', ipv6Subnet: 64 })).toEqual([
      "hotParams[0].key.ipv6Subnet: applies to from: 'ip' only",
    ]);
  });

  it('refuses a regex the linear-time engine cannot run, and over-long patterns', () => {
    expect(issuesOf({ from: 'header', name: 'a', match: { strategy: 'regex', pattern: '(a)\\1' } })).toEqual([
      'hotParams[0].key.match.pattern: is not a pattern the linear-time engine runs: a backreference (\\1) at 3 (no linear-time engine runs it)',
    ]);
    expect(issuesOf({ from: 'header', name: 'a', match: { strategy: 'prefix', pattern: 'p'.repeat(1025) } })).toEqual([
      'hotParams[0].key.match.pattern: must be at most 1024 characters, got 1025',
    ]);
    expect(issuesOf({ from: 'header', name: 'a', match: { strategy: 'glob', pattern: 1 } })).toEqual([
      "hotParams[0].key.match.strategy: must be one of 'exact', 'prefix', 'contains', 'regex', got \"glob\"",
      'hotParams[0].key.match.pattern: must be a string, got 1',
    ]);
  });

  it('takes exactly one of paramIndex, paramKey and key', () => {
    try {
      normalizeRuleSet({ hotParams: [{ resource: 'r', threshold: 1, paramKey: 'id', key: { from: 'ip' } }] });
      throw new Error('accepted');
    } catch (error) {
      expect((error as RuleValidationError).issues).toEqual([
        { path: 'hotParams[0]', message: 'needs exactly one of paramIndex, paramKey and key, got paramKey and key' },
      ]);
    }
  });
});
