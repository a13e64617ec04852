import { HotParamBlockError } from '@floodgate/core';
import type { HotParamRule } from '@floodgate/core/metrics';
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

  it('names the value and the argument it came from in its message', () => {
    expect(blockFor({ threshold: 5 }, 42).message).toBe('Blocked by a hotspot rule on "r" for value 42 (args[0])');
    expect(blockFor({ threshold: 5, paramIndex: -1 }, 'u1').message).toBe(
      'Blocked by a hotspot rule on "r" for value "u1" (args[-1])',
    );
  });

  it('shows a bigint value as the digits it is counted under, in its message and in JSON', () => {
    const error = blockFor({ threshold: 5 }, 42n);
    expect(error.message).toBe('Blocked by a hotspot rule on "r" for value 42 (args[0])');
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ value: '42' });
    expect(JSON.parse(JSON.stringify(blockFor({ threshold: 5 }, 7)))).toMatchObject({ value: 7 });
    expect(blockFor({ threshold: 5 }, true).toJSON()).toMatchObject({ value: true });
  });

  it('names no argument in the message of an error built for a rule that names none', () => {
    const [normalized] = normalizeRules('hotParams', [{ resource: 'r', paramIndex: 0, threshold: 5 }]);
    const { paramIndex: _none, ...rule } = normalized as HotParamRule;
    expect(new HotParamBlockError({ resource: 'r', rule, value: 'a' }).message).toBe(
      'Blocked by a hotspot rule on "r" for value "a"',
    );
  });

  it('tells HTTP clients what was exceeded in its detail', () => {
    expect(blockFor({ threshold: 5 }, 'a').detail).toBe(
      'The request rate limit for this caller or parameter value was exceeded.',
    );
  });

  it('cuts a long value in its message', () => {
    const message = blockFor({ threshold: 5 }, 'v'.repeat(100_000)).message;
    expect(message.length).toBeLessThan(200);
    expect(message).toContain('(100000 characters, 99940 cut)');
  });
});
