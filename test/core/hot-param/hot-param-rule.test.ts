import { HotParamBlockError, type HotParamRule } from '@floodgate/core';
import { normalizeRules } from '../rules';

/** The block error a rule gives for `value`. */
function blockFor(rule: Record<string, unknown>, value: unknown): HotParamBlockError {
  const [normalized] = normalizeRules('hotParams', [{ resource: 'r', paramIndex: 0, ...rule }]);
  return new HotParamBlockError({ resource: 'r', rule: normalized as HotParamRule, value });
}

describe('HotParamBlockError', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'gives a value named like an Object.prototype member (%s) the rule’s quota, not NaN (#12)',
    (value) => {
      expect(blockFor({ threshold: 5 }, value).quota()).toEqual({ name: 'hotspot', quota: 5, windowSeconds: 1 });
    },
  );

  it('gives a value its specific item’s quota, over the rule’s duration in whole seconds', () => {
    const error = blockFor({ threshold: 5, durationMs: 1500, specificItems: { vip: 50, constructor: 7 } }, 'vip');
    expect(error.quota()).toEqual({ name: 'hotspot', quota: 50, windowSeconds: 2 });
    expect(blockFor({ threshold: 5, specificItems: { constructor: 7 } }, 'constructor').quota()!.quota).toBe(7);
  });

  it('has no quota for a concurrency rule', () => {
    expect(blockFor({ metric: 'concurrency', threshold: 5 }, 'a').quota()).toBeUndefined();
  });

  it('cuts a long value in its message', () => {
    const message = blockFor({ threshold: 5 }, 'v'.repeat(100_000)).message;
    expect(message.length).toBeLessThan(200);
    expect(message).toContain('(100000 characters, 99940 cut)');
  });
});
