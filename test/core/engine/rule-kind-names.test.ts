import { ErrorCodes, Floodgate, isBlockError } from '@floodgate/core';
import { RULE_KIND_NAMES } from '@floodgate/core/metrics';
import { ManualClock } from '@floodgate/core/testing';

describe('RULE_KIND_NAMES', () => {
  it('names every kind of a rule set once, by a key, a name and codes no other kind has', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    expect(RULE_KIND_NAMES.map((kind) => kind.key)).toEqual(Object.keys(fg.getRules()));
    const names = RULE_KIND_NAMES.map((kind) => kind.name);
    expect(new Set(names).size).toBe(names.length);
    const codes = RULE_KIND_NAMES.flatMap((kind) => kind.codes);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(ErrorCodes).toHaveProperty(code);
  });

  it('gives the route options HTTP routes take: rateLimit, circuitBreaker and hotParam', () => {
    const options = Object.fromEntries(
      RULE_KIND_NAMES.flatMap(({ key, routeOption }) => (routeOption === undefined ? [] : [[routeOption, key]])),
    );
    expect(options).toEqual({ rateLimit: 'flow', circuitBreaker: 'circuitBreakers', hotParam: 'hotParams' });
  });

  it('names a block by the kind whose code it has, as its error and its rule id do', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadRules({
      authority: [{ resource: 'a', strategy: 'deny', origins: ['x'] }],
      hotParams: [{ resource: 'h', paramIndex: 0, threshold: 0 }],
      flow: [{ resource: 'f', threshold: 0 }],
    });
    const ruleIds: string[] = [];
    fg.on('block', (event) => ruleIds.push(event.ruleId));
    const blocks = [fg.tryEntry('a', { origin: 'x' }), fg.tryEntry('h', { args: ['v'] }), fg.tryEntry('f')].filter(
      isBlockError,
    );
    expect(blocks).toHaveLength(3);
    for (const [i, error] of blocks.entries()) {
      const kind = RULE_KIND_NAMES.find((named) => named.codes.includes(error.code))!;
      expect(error.kind).toBe(kind.name);
      expect(ruleIds[i]).toBe(`${kind.name}#0`);
    }
  });
});
