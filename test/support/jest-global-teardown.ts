// Jest's globalTeardown (jest.config.js): stops what the globalSetup started; see test-services.ts.
export { stopTestServices as default } from './test-services';
