import { Floodgate, isBlockError } from '@floodgate/core';

/** Which rule kinds the core in this tree really enforces, and why not where it does not. */
export interface RuleKindSupport {
  readonly circuitBreakers: boolean;
  readonly circuitBreakersWhy: string;
  readonly hotParams: boolean;
  readonly hotParamsWhy: string;
}

/**
 * Checks, on a scratch engine, that a breaker opens and a hotspot rule blocks. A rule kind that
 * loads but does nothing (a placeholder compiler) would make its benchmark measure nothing, so
 * such cases are reported as pending instead.
 */
export function probeRuleKinds(): RuleKindSupport {
  const breaker = probe(() => {
    const fg = new Floodgate();
    fg.loadRules({
      circuitBreakers: [
        { resource: 'probe', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 60_000 },
      ],
    });
    const entry = fg.entry('probe');
    entry.traceError(new Error('trip'));
    entry.exit();
    const result = fg.tryEntry('probe');
    return isBlockError(result) && result.code === 'ERR_CIRCUIT_OPEN' ? '' : 'a breaker rule loads but never opens';
  });
  const hot = probe(() => {
    const fg = new Floodgate();
    fg.loadRules({ hotParams: [{ resource: 'probe', paramIndex: 0, threshold: 0 }] });
    const result = fg.tryEntry('probe', { args: ['v'] });
    return isBlockError(result) && result.code === 'ERR_HOT_PARAM_BLOCKED'
      ? ''
      : 'a hotspot rule loads but never blocks';
  });
  return { circuitBreakers: breaker === '', circuitBreakersWhy: breaker, hotParams: hot === '', hotParamsWhy: hot };
}

function probe(check: () => string): string {
  try {
    return check();
  } catch (error) {
    return `probe failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
