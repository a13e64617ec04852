import fc from 'fast-check';
import { EngineHarness } from './engine-harness';
import { scenarios } from './scenario';

/**
 * The property tests pass vacuously if their scenarios never reach the paths they are about.
 * This checks that the scenarios `npm test` plays (the same seed) do reach them: waits,
 * aborted waits, cancels, timeouts, checks that throw, callbacks that throw, store fallbacks of
 * every kind, and breakers that open, probe and close.
 */
describe('property scenarios', () => {
  it('reach every path the invariants are about', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const total = new Map<string, number>();
    for (const scenario of fc.sample(scenarios({ flow: 2, hotParams: 2, circuitBreakers: 2, authority: true }), {
      seed: 20261201,
      numRuns: 100,
    })) {
      const h = new EngineHarness(scenario);
      for (const op of scenario.ops) await h.apply(op);
      await h.finish();
      expect(h.unexpected).toEqual([]);
      for (const [what, n] of h.tally) total.set(what, (total.get(what) ?? 0) + n);
    }
    warn.mockRestore();
    const paths = [
      'admitted',
      'admitted after a wait',
      'cancelled',
      'aborted',
      'timeout',
      'cannot read k',
      'then broke',
      'predicate broke',
      'fallback broke',
      'ERR_FLOW_BLOCKED',
      'ERR_HOT_PARAM_BLOCKED',
      'ERR_CIRCUIT_OPEN',
      'ERR_AUTHORITY_BLOCKED',
      'cluster fallback (timeout)',
      'cluster fallback (error)',
      'breaker closed -> open',
      'breaker open -> halfOpen',
      'breaker halfOpen -> closed',
      'breaker halfOpen -> open',
    ];
    expect(paths.filter((path) => !total.has(path))).toEqual([]);
  }, 60_000);
});
