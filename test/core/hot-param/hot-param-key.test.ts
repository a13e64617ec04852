import { Floodgate, isBlockError, type Entry } from '@floodgate/core';
import { MANY_VALUES } from '@floodgate/core/http';
import { ManualClock } from '@floodgate/core/testing';

/** Hotspot rules whose value is named by a key source: read from the entry's `keys`, filtered by the match. */

function engine(): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock(1000);
  return { fg: new Floodgate({ clock }), clock };
}

const passes = (fg: Floodgate, keys: Record<string, unknown> | undefined): boolean => {
  const result = fg.tryEntry('GET /users/:id', { inbound: true, ...(keys === undefined ? {} : { keys }) });
  if (isBlockError(result)) return false;
  (result as Entry).exit();
  return true;
};

describe('hotspot rules with a key source', () => {
  it('count per value of the source, read from the entry’s keys', () => {
    const { fg } = engine();
    fg.loadRules({
      hotParams: [{ resource: 'GET /users/:id', key: { from: 'header', name: 'X-Api-Key' }, threshold: 1 }],
    });
    const key = (value: unknown) => ({ 'header:x-api-key': value });
    expect([passes(fg, key('a')), passes(fg, key('a')), passes(fg, key('b'))]).toEqual([true, false, true]);
  });

  it('say which sources their resource reads, each once whatever the matches', () => {
    const { fg } = engine();
    fg.loadRules({
      hotParams: [
        { resource: 'GET /users/:id', key: { from: 'ip' }, threshold: 1 },
        {
          resource: 'GET /users/:id',
          key: { from: 'header', name: 'a', match: { strategy: 'exact', pattern: 'x' } },
          threshold: 1,
        },
        { resource: 'GET /users/:id', key: { from: 'header', name: 'a' }, threshold: 9 },
      ],
    });
    expect(fg.resourceInfo('GET /users/:id').keySources).toEqual([
      { from: 'ip', ipv6Subnet: 56 },
      { from: 'header', name: 'a' },
    ]);
    expect(fg.resourceInfo('other').keySources).toEqual([]);
  });

  it.each([
    ['exact', 'sk_1', ['sk_1'], ['sk_12', 'x']],
    ['prefix', 'sk_', ['sk_1', 'sk_'], ['pk_1', 'Sk_1']],
    ['contains', 'live', ['sk_live_1', 'live'], ['sk_test_1']],
    ['regex', 'sk_(live|test)_[0-9]+', ['sk_live_1', 'sk_test_42'], ['sk_live_', 'xsk_live_1']],
  ] as const)('count only the values a %s match accepts', (strategy, pattern, counted, ignored) => {
    const { fg } = engine();
    fg.loadRules({
      hotParams: [
        { resource: 'GET /users/:id', key: { from: 'query', name: 'k', match: { strategy, pattern } }, threshold: 0 },
      ],
    });
    for (const value of counted) expect(passes(fg, { 'query:k': value })).toBe(false);
    for (const value of ignored) expect(passes(fg, { 'query:k': value })).toBe(true);
  });

  it('count each value of several, and refuse when any is over its limit', () => {
    const { fg } = engine();
    fg.loadRules({ hotParams: [{ resource: 'GET /users/:id', key: { from: 'header', name: 'h' }, threshold: 1 }] });
    expect(passes(fg, { 'header:h': 'a' })).toBe(true);
    expect(passes(fg, { 'header:h': ['b', 'a'] })).toBe(false);
    // The refused request took nothing: b still has its token.
    expect(passes(fg, { 'header:h': 'b' })).toBe(true);
  });

  it('count the many-values marker whatever the match, so many values never step around a rule', () => {
    const { fg } = engine();
    fg.loadRules({
      hotParams: [
        {
          resource: 'GET /users/:id',
          key: { from: 'header', name: 'h', match: { strategy: 'prefix', pattern: 'sk_' } },
          threshold: 1,
        },
      ],
    });
    expect([passes(fg, { 'header:h': MANY_VALUES }), passes(fg, { 'header:h': MANY_VALUES })]).toEqual([true, false]);
  });

  it('leave calls without keys alone (a call that is not an HTTP request)', () => {
    const { fg } = engine();
    fg.loadRules({ hotParams: [{ resource: 'GET /users/:id', key: { from: 'ip' }, threshold: 0 }] });
    expect(passes(fg, undefined)).toBe(true);
    expect(passes(fg, { 'ip/56': '10.0.0.1' })).toBe(false);
  });

  it('name the source in the block’s message', () => {
    const { fg } = engine();
    fg.loadRules({ hotParams: [{ resource: 'GET /users/:id', key: { from: 'cookie', name: 'sid' }, threshold: 0 }] });
    const blocked = fg.tryEntry('GET /users/:id', { keys: { 'cookie:sid': 's1' } });
    expect(isBlockError(blocked) && blocked.message).toBe(
      'Blocked by a hotspot rule on "GET /users/:id" for value "s1" (cookie:sid)',
    );
  });
});
