import { callKey, readCallgrind, splitCallKey } from '../../../bench/instructions/callgrind-profile';

describe('readCallgrind', () => {
  const profile = [
    'events: Ir',
    'fn=(1) 0x10',
    '3 100',
    'cfn=(2) helper',
    'calls=2 0',
    '4 60',
    '+1 5',
    'fn=(2)',
    '* 40',
    'fn=(1)',
    'cfn=(2)',
    'calls=1 0',
    '9 30',
    '',
  ].join('\n');

  it("reads each function's own instructions and each caller's calls, names resolved once", () => {
    const { self, calls, callCounts } = readCallgrind(profile, (given) => (given === '0x10' ? 'JS:main' : given));
    expect(Object.fromEntries(self)).toEqual({ 'JS:main': 105, helper: 40 });
    expect(Object.fromEntries(calls)).toEqual({ [callKey('JS:main', 'helper')]: 90 });
    expect(Object.fromEntries(callCounts)).toEqual({ [callKey('JS:main', 'helper')]: 3 });
  });

  it('splits a call key back into its caller and callee', () => {
    expect(splitCallKey(callKey('JS:main', 'helper'))).toEqual({ caller: 'JS:main', callee: 'helper' });
  });
});
