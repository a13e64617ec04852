import { Floodgate, FlowBlockError, HotParamBlockError, getGuardedMethods } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { createDemoBackend, main } from '../../examples/decorators/main';
import { POPULAR, createUserService } from '../../examples/decorators/user-service';

function setup(): {
  clock: ManualClock;
  fg: Floodgate;
  backend: ReturnType<typeof createDemoBackend>;
  users: ReturnType<typeof createUserService>;
} {
  const clock = new ManualClock(1000);
  const fg = new Floodgate({ clock });
  const backend = createDemoBackend();
  return { clock, fg, backend, users: createUserService(backend, fg) };
}

describe('examples/decorators', () => {
  it('guards three methods, each under UserService.<method>', () => {
    const { users } = setup();
    expect(getGuardedMethods(users).map((m) => m.resource)).toEqual([
      'UserService.getProfile',
      'UserService.getRecommendations',
      'UserService.search',
    ]);
  });

  it('limits profiles to 2 per second per user without touching other users', async () => {
    const { clock, users } = setup();
    await users.getProfile('alice');
    await users.getProfile('alice');
    await expect(users.getProfile('alice')).rejects.toBeInstanceOf(HotParamBlockError);
    await expect(users.getProfile('bob')).resolves.toEqual({ id: 'bob', name: 'Bob' });
    // Sentinel refills a value's tokens once more than a full duration has passed.
    await clock.advance(1001);
    await expect(users.getProfile('alice')).resolves.toEqual({ id: 'alice', name: 'Alice' });
  });

  it('serves the last good recommendations while the API fails, then stops calling it', async () => {
    const { backend, users } = setup();
    const live = await users.getRecommendations('alice');
    expect(live.source).toBe('live');
    backend.failing = true;
    for (let i = 0; i < 3; i++)
      await expect(users.getRecommendations('alice')).resolves.toEqual({ items: live.items, source: 'cache' });
    const calls = backend.recommendationCalls;
    await expect(users.getRecommendations('alice')).resolves.toEqual({
      items: live.items,
      source: 'cache (circuit open)',
    });
    expect(backend.recommendationCalls).toBe(calls);
  });

  it('falls back to popular items for a user with no last good answer', async () => {
    const { backend, users } = setup();
    backend.failing = true;
    await expect(users.getRecommendations('carol')).resolves.toEqual({ items: POPULAR, source: 'cache' });
  });

  it('goes live again once a probe succeeds after retryTimeoutMs', async () => {
    const { backend, clock, fg, users } = setup();
    backend.failing = true;
    for (let i = 0; i < 4; i++) await users.getRecommendations('alice');
    expect(fg.circuitState('UserService.getRecommendations')[0]?.state).toBe('open');
    backend.failing = false;
    await clock.advance(10_000);
    await expect(users.getRecommendations('alice')).resolves.toMatchObject({ source: 'live' });
    expect(fg.circuitState('UserService.getRecommendations')[0]?.state).toBe('closed');
  });

  it('blocks the sixth search in a second, synchronously', () => {
    const { users } = setup();
    for (let i = 0; i < 5; i++) expect(users.search('lamps')).toEqual(['lamps #1', 'lamps #2']);
    expect(() => users.search('lamps')).toThrow(FlowBlockError);
  });

  it('prints what each decorator did', async () => {
    const lines = await main();
    expect(lines).toEqual(
      expect.arrayContaining([
        '  getProfile(alice) blocked (ERR_HOT_PARAM_BLOCKED)',
        '  getProfile(bob) ok (Bob)',
        expect.stringMatching(/^ {2}circuit open +cache \(circuit open\) +API not called/),
        expect.stringMatching(/^ {2}10 s later \(probe\) +live +API called/),
        '  circuit: closed',
        '  8 searches: 5 passed, 3 blocked',
      ]),
    );
  });
});
