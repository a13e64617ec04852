import fc from 'fast-check';
import { Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualProbe } from '@floodgate/core/testing';
import { EngineHarness } from './engine-harness';
import { extremeScenarios, type ExtremeScenario } from './extreme-scenario';
import { BreakerWatch, limitViolations, NumberWatch, systemViolations } from './invariants';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';
import { RESOURCES } from './scenario';
import { MAX_DURATION_MS } from '../../../packages/core/src/kernel/rule-reader';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 300;

/** A rule's field, as a validation issue names it: `flow[0].threshold`, `hotParams[1].specificItems.v1`. */
const FIELD_PATH = /^(flow|hotParams|circuitBreakers|system)\[\d+\](\.[A-Za-z0-9]+)+$/;

/**
 * Plays an extreme scenario: every violation found after each step (limits, system limits,
 * numbers, breakers) and once everything has ended; `undefined` when its rules were refused.
 */
async function playExtreme(scenario: ExtremeScenario): Promise<string[] | undefined> {
  try {
    new Floodgate().loadRules(scenario.rules);
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    const paths = (error as RuleValidationError).issues.map((issue) => issue.path);
    expect(paths.filter((path) => !FIELD_PATH.test(path))).toEqual([]);
    return undefined;
  }
  const h = new EngineHarness(scenario, new ManualProbe(scenario.signals));
  const numbers = new NumberWatch(h, RESOURCES);
  const breakers = new BreakerWatch(h);
  const check = (): string[] => [
    ...limitViolations(h),
    ...systemViolations(h),
    ...numbers.violations(),
    ...breakers.violations(),
  ];
  const found: string[] = [];
  for (let i = 0; i < scenario.ops.length && found.length === 0; i++) {
    await h.apply(scenario.ops[i]!);
    for (const violation of check()) found.push(`after step ${i} (${JSON.stringify(scenario.ops[i])}): ${violation}`);
  }
  if (found.length === 0) {
    // Queues and probes may run to MAX_DURATION_MS: end them in steps that long.
    await h.finish(MAX_DURATION_MS);
    found.push(...limitViolations(h), ...systemViolations(h), ...numbers.violations(), ...breakers.leftoverProbes());
  }
  for (const error of h.unexpected)
    found.push(`the engine threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return found;
}

describe('property: extreme numbers (#24)', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => {
    warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterAll(() => warn.mockRestore());

  it(
    'every rule is refused at load naming its field, or no NaN or Infinity reaches a decision, an error or a header, and no limit admits more than its threshold',
    async () => {
      let played = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(extremeScenarios(), async (scenario) => {
          const found = await playExtreme(scenario);
          if (found === undefined) refused++;
          else played++;
          expect(found ?? []).toEqual([]);
        }),
        propertyRuns(RUNS),
      );
      // Most scenarios load and play: the property is not passed by refusing everything.
      expect(played).toBeGreaterThan(refused);
    },
    propertyTimeoutMs(RUNS),
  );
});
