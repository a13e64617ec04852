import { Entry, Floodgate, isBlockError } from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import { collectMetrics } from '@floodgate/prometheus';
import { Registry } from 'prom-client';
import type { CoreCase } from './core-cases';

/** Resources in the scrape case. */
export const SCRAPE_RESOURCES = 1000;

const NEVER = 1e9; // a threshold no benchmark reaches
const HOUR_MS = 3_600_000;

/** A QPS rule that never blocks and a breaker that stays closed, on `resource`. */
const guarded = (resource: string): RuleSetOptions => ({
  flow: [{ resource, threshold: NEVER }],
  circuitBreakers: [{ resource, strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: HOUR_MS }],
});

/**
 * The cases of the Prometheus exporter (issue #15): entry()+exit() on an engine with
 * `collectMetrics` attached against the same rules on an engine without (the exporter must add
 * nothing to the entry path: within 1.05×), and the time a scrape takes with 1,000 resources.
 */
export function metricsCases(): CoreCase[] {
  const passing = (attached: boolean) => async (): Promise<() => unknown> => {
    const fg = new Floodgate();
    fg.loadRules(guarded('r'));
    if (attached) collectMetrics(fg, { registry: new Registry() });
    const entry = fg.tryEntry('r');
    if (isBlockError(entry)) throw new Error(`r should pass, got ${entry.code}`);
    (entry as Entry).exit();
    return () => fg.entry('r').exit();
  };
  return [
    {
      id: 'fg.metrics.off',
      owner: 'floodgate',
      label: 'entry() + exit(), QPS + breaker, no exporter (own engine)',
      async: false,
      setup: passing(false),
    },
    {
      id: 'fg.metrics.on',
      owner: 'floodgate',
      label: 'entry() + exit(), QPS + breaker, Prometheus exporter attached (own engine)',
      async: false,
      setup: passing(true),
    },
    {
      id: 'prom.scrape1000',
      owner: 'floodgate',
      label: `Prometheus scrape (registry.metrics()), ${SCRAPE_RESOURCES.toLocaleString('en-US')} resources with a QPS rule and a breaker each`,
      async: true,
      setup: async () => {
        const fg = new Floodgate();
        const names = Array.from({ length: SCRAPE_RESOURCES }, (_, i) => `GET /api/items-${i}`);
        fg.loadRules({
          flow: names.map((resource, i) => ({ resource, threshold: i % 10 === 0 ? 0 : NEVER })),
          circuitBreakers: names.map((resource) => ({
            resource,
            strategy: 'errorRatio' as const,
            threshold: 0.5,
            retryTimeoutMs: HOUR_MS,
          })),
        });
        for (const name of names) {
          for (let i = 0; i < 3; i++) {
            const entry = fg.tryEntry(name);
            if (entry instanceof Entry) entry.exit();
          }
        }
        const registry = new Registry();
        collectMetrics(fg, { registry });
        const text = await registry.metrics();
        const labelled = new Set(
          [...text.matchAll(/^floodgate_passes_total\{resource="([^"]+)"\}/gm)].map((m) => m[1]),
        );
        if (labelled.size !== SCRAPE_RESOURCES)
          throw new Error(`the scrape should label ${SCRAPE_RESOURCES} resources, got ${labelled.size}`);
        if (!/^floodgate_blocks_total\{kind="flow",rule="flow#0",resource="GET \/api\/items-0"\} 3$/m.test(text))
          throw new Error('the scrape should count the blocks of items-0');
        return () => registry.metrics();
      },
    },
  ];
}
