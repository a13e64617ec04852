import { Floodgate } from '@floodgate/core';
import type { CircuitBreakerRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import type { ClusterBackend } from '@floodgate/core/cluster';

// The engine's side of shared breakers that needs no store: which breaker rules are shared.
// Shared breakers themselves are tested on a real Redis (test/redis/shared-breaker*.test.ts).

const RULE: CircuitBreakerRuleOptions = {
  resource: 'api',
  strategy: 'errorCount',
  threshold: 0,
  minRequestAmount: 1,
  retryTimeoutMs: 1000,
  cluster: true,
};

/** A backend of someone else's making that shares limits but not breakers (`breaker()` is optional). */
const limitsOnly: ClusterBackend = {
  name: 'limits-only',
  limiter() {
    throw new Error('no limiter is asked for: the engine has no cluster flow or hotspot rule');
  },
};

function fail(fg: Floodgate): void {
  const entry = fg.entry('api');
  entry.traceError(new Error('boom'));
  entry.exit();
}

describe('circuit breaker rules with cluster: true', () => {
  it('act locally on an engine whose backend cannot share breakers', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock, cluster: limitsOnly });
    const changes: string[] = [];
    fg.on('circuitStateChange', (e) => changes.push(`${e.from}->${e.to}`));
    fg.loadCircuitBreakerRules([RULE]);
    // A local breaker: no asynchronous check, so enter() decides as entry() does.
    expect(fg.resourceInfo('api').mayWait).toBe(false);
    fail(fg);
    await expect(fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 1000 });
    expect(changes).toEqual(['closed->open']);
  });

  it('act locally on an engine without a backend', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadCircuitBreakerRules([RULE]);
    fail(fg);
    expect(fg.circuitState('api')).toMatchObject([{ state: 'open', rule: { cluster: true } }]);
  });
});
