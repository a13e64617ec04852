import fc from 'fast-check';
import { play } from './engine-harness';
import { limitViolations } from './invariants';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';
import { scenarios } from './scenario';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 150;

describe('property: limits', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => {
    warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterAll(() => warn.mockRestore());

  it(
    'no window admits more than its threshold: per resource, per origin, per hotspot value, pacing included',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          scenarios({ flow: 2, hotParams: 2, circuitBreakers: 1, authority: true }),
          async (scenario) => {
            expect(await play(scenario, { step: limitViolations, end: limitViolations })).toEqual([]);
          },
        ),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
