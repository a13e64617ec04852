import fc from 'fast-check';
import { claimedPriority, givenPriority, PRIORITIES, type Priority } from '@floodgate/core/http';

const rank = (priority: Priority): number => PRIORITIES.indexOf(priority);

/** A priority word in random letter case, with blanks around it or not. */
const word = fc
  .tuple(fc.constantFrom(...PRIORITIES), fc.array(fc.boolean(), { maxLength: 9 }), fc.constantFrom('', ' ', '\t'))
  .map(([w, upper, pad]) => pad + [...w].map((ch, i) => (upper[i] === true ? ch.toUpperCase() : ch)).join('') + pad);
const value = fc.oneof(word, fc.string(), fc.constant(Buffer.from('critical')), fc.integer());

describe('claimedPriority', () => {
  it('reads one claimed word in any letter case, blanks ignored, lowered to max', () => {
    expect(claimedPriority([' Sheddable '], 'default')).toBe('sheddable');
    expect(claimedPriority(['CRITICAL'], 'default')).toBe('default');
    expect(claimedPriority(['critical'], 'critical')).toBe('critical');
    expect(claimedPriority(['critical'], 'sheddable')).toBe('sheddable');
  });

  it('reads no value, two values, an unknown word or bytes as default', () => {
    expect(claimedPriority(undefined, 'critical')).toBe('default');
    expect(claimedPriority([], 'critical')).toBe('default');
    expect(claimedPriority(['critical', 'critical'], 'critical')).toBe('default');
    expect(claimedPriority(['urgent'], 'critical')).toBe('default');
    expect(claimedPriority([Buffer.from('critical')], 'critical')).toBe('default');
  });

  it('never rises above max with a claim, and is the claim itself when it is at most max (property)', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 3 }), fc.constantFrom(...PRIORITIES), (values, max) => {
        const used = claimedPriority(values, max);
        const only = values.length === 1 && typeof values[0] === 'string' ? values[0].trim().toLowerCase() : undefined;
        const claim = PRIORITIES.find((p) => p === only);
        if (claim === undefined) expect(used).toBe('default');
        else expect(used).toBe(rank(claim) < rank(max) ? max : claim);
        // What no claim can pass: the greater of max and default (a call that claims nothing is default).
        expect(rank(used)).toBeGreaterThanOrEqual(Math.min(rank(max), rank('default')));
      }),
    );
  });
});

describe('givenPriority', () => {
  it("takes a function's answer as it is, undefined as default, and throws on anything else", () => {
    expect(givenPriority('critical')).toBe('critical');
    expect(givenPriority(undefined)).toBe('default');
    expect(() => givenPriority('urgent')).toThrow(
      new TypeError(
        `Floodgate's priority option must return 'critical', 'default', 'sheddable' or undefined, got "urgent"`,
      ),
    );
  });
});
