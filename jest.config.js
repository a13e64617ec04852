/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    '^@floodgate/core/(http|cluster|metrics)$': '<rootDir>/packages/core/src/$1/index.ts',
    '^@floodgate/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
  },
};

// Two projects, because decorators compile two ways: everything with standard (TC39)
// decorators, and test/core/decorators/legacy with experimentalDecorators +
// emitDecoratorMetadata (as NestJS compiles), through its own tsconfig.
module.exports = {
  // `npm test` reports coverage of the packages' sources (a summary; coverage/ holds the details).
  collectCoverageFrom: ['packages/*/src/**/*.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
  projects: [
    {
      ...shared,
      displayName: 'standard',
      roots: ['<rootDir>/test'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/core/decorators/legacy/'],
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
  ],
};
