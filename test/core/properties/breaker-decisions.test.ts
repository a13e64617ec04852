import fc from 'fast-check';
import { play, type EngineHarness } from './engine-harness';
import { BreakerWatch } from './invariants';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';
import { scenarios } from './scenario';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 150;

describe('property: circuit breakers', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => {
    warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterAll(() => warn.mockRestore());

  it(
    'no breaker stays half-open past retryTimeoutMs without deciding',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          scenarios({ flow: 1, hotParams: 1, circuitBreakers: 2, authority: false }),
          async (scenario) => {
            let watch: BreakerWatch | undefined;
            const step = (h: EngineHarness): string[] => (watch ??= new BreakerWatch(h)).violations();
            const end = (h: EngineHarness): string[] => (watch ??= new BreakerWatch(h)).leftoverProbes();
            expect(await play(scenario, { step, end })).toEqual([]);
          },
        ),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
