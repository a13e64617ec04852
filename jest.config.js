/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    '^@floodgate/core/(rules|http|cluster|metrics|testing|sentinel)$': '<rootDir>/packages/core/src/$1/index.ts',
    '^@floodgate/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
  },
};

// Three projects, because decorators compile two ways: everything with standard (TC39)
// decorators; test/core/decorators/legacy with experimentalDecorators + emitDecoratorMetadata
// (as NestJS compiles), through its own tsconfig; and the NestJS integration (its package,
// tests and example), compiled the same legacy way through test/nestjs/tsconfig.json.
const NESTJS_TESTS = ['<rootDir>/test/nestjs/', '<rootDir>/test/examples/nestjs.test.ts'];
// globalSetup provides the programs and servers the tests use (test/support/test-services.ts):
// FLOODGATE_REDIS_URL, FLOODGATE_REDIS_SERVER_BIN, FLOODGATE_PROMETHEUS_BIN, FLOODGATE_CHROMIUM_BIN.
module.exports = {
  globalSetup: '<rootDir>/test/support/jest-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/jest-global-teardown.ts',
  // `npm test` reports coverage of the packages' sources (a summary; coverage/ holds the details).
  collectCoverageFrom: ['packages/*/src/**/*.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
  projects: [
    {
      ...shared,
      displayName: 'standard',
      roots: ['<rootDir>/test'],
      testPathIgnorePatterns: [
        '/node_modules/',
        '<rootDir>/test/core/decorators/legacy/',
        '<rootDir>/test/packages/consumer/',
        ...NESTJS_TESTS,
      ],
      transform: {
        '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.check.json' }],
      },
    },
    {
      ...shared,
      displayName: 'legacy-decorators',
      roots: ['<rootDir>/test/core/decorators/legacy'],
      transform: {
        '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/core/decorators/legacy/tsconfig.json' }],
      },
    },
    {
      ...shared,
      displayName: 'nestjs',
      roots: ['<rootDir>/test'],
      testMatch: ['<rootDir>/test/nestjs/**/*.test.ts', '<rootDir>/test/examples/nestjs.test.ts'],
      transform: {
        '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/nestjs/tsconfig.json' }],
      },
    },
  ],
};
