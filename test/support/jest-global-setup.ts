// Jest's globalSetup (jest.config.js): the programs and the shared Redis; see test-services.ts.
export { provideTestServices as default } from './test-services';
