import { AuthorityBlockError, Entry, Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

describe('authority rules', () => {
  const fg = new Floodgate({ clock: new ManualClock() });
  fg.loadAuthorityRules([
    { resource: 'admin', origins: ['ops', 'sre'] },
    { resource: 'public', strategy: 'deny', origins: ['scraper'] },
  ]);

  it('lets only the listed origins through an allow rule', () => {
    expect(fg.tryEntry('admin', { origin: 'ops' })).toBeInstanceOf(Entry);
    expect(fg.tryEntry('admin', { origin: 'guest' })).toMatchObject({ code: 'ERR_AUTHORITY_BLOCKED', origin: 'guest' });
  });

  it('refuses the listed origins of a deny rule', () => {
    expect(fg.tryEntry('public', { origin: 'scraper' })).toBeInstanceOf(AuthorityBlockError);
    expect(fg.tryEntry('public', { origin: 'browser' })).toBeInstanceOf(Entry);
  });

  it('lets calls without an origin pass, as Sentinel does', () => {
    expect(fg.tryEntry('admin')).toBeInstanceOf(Entry);
  });

  it('is checked before flow rules', () => {
    const engine = new Floodgate({ clock: new ManualClock() });
    engine.loadRules({
      flow: [{ resource: 'r', threshold: 0 }],
      authority: [{ resource: 'r', strategy: 'deny', origins: ['x'] }],
    });
    expect(engine.tryEntry('r', { origin: 'x' })).toBeInstanceOf(AuthorityBlockError);
  });

  it('validates origins', () => {
    expect(() => fg.loadAuthorityRules([{ resource: 'r', origins: ['', 3 as never] }])).toThrow(
      'authority[0].origins[0]: must be a non-empty string, got ""; authority[0].origins[1]: must be a non-empty string, got 3',
    );
  });
});
