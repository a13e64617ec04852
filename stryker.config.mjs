// Mutation testing of the rule kinds (flow, circuit breaker, hotspot): `npm run mutation`.
// An occasional report, not a CI gate: 2 hours or more on 2 cores from scratch (1,468 mutants,
// many of them timeouts of 10 s), minutes when incremental (reports/stryker-incremental.json is
// reused); `npx stryker run --mutate 'packages/core/src/circuit-breaker/**/*.ts'` runs one kind,
// then `node scripts/mutation-summary.mjs` summarises it. The summary of the latest run is
// committed in bench/results/mutation.md; the HTML report is written to reports/mutation/.
// The property tests run for every mutant they cover (all of them): fewer cases than npm test's
// keep a run within hours; they stop at the first counterexample, without shrinking.
process.env.FLOODGATE_PROPERTY_RUNS ??= '50';

import { createRequire } from 'node:module';

// The jest project the rule kinds' tests run in, so both resolve packages and compile alike.
const standard = createRequire(import.meta.url)('./jest.config.js').projects.find((p) => p.displayName === 'standard');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    // Only the standard project: the legacy-decorator tests do not exercise the rule kinds.
    config: {
      testEnvironment: standard.testEnvironment,
      roots: ['<rootDir>/test/core'],
      testMatch: standard.testMatch,
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/core/decorators/legacy/', '<rootDir>/test/core/http/'],
      moduleNameMapper: standard.moduleNameMapper,
      transform: standard.transform,
    },
    enableFindRelatedTests: false,
  },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.check.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: [
    'packages/core/src/flow/**/*.ts',
    'packages/core/src/circuit-breaker/**/*.ts',
    'packages/core/src/hot-param/**/*.ts',
  ],
  ignorePatterns: ['bench', 'examples', 'reports', 'coverage', '.redis-test', 'packages/*/dist'],
  coverageAnalysis: 'perTest',
  concurrency: 1,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 80, low: 60, break: null },
  timeoutMS: 10000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
