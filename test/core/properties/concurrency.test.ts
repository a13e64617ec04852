import fc from 'fast-check';
import { play } from './engine-harness';
import { leftoverCounts, negativeCounts } from './invariants';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';
import { scenarios } from './scenario';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 150;

describe('property: concurrency', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => {
    warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterAll(() => warn.mockRestore());

  it(
    'no concurrency count is ever negative, and every one returns to 0 once every call has ended',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          scenarios({ flow: 2, hotParams: 2, circuitBreakers: 1, authority: true }),
          async (scenario) => {
            expect(await play(scenario, { step: negativeCounts, end: leftoverCounts })).toEqual([]);
          },
        ),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
