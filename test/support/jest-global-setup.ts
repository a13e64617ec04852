// Jest's globalSetup (jest.config.js): the programs and the shared Redis; see test-services.ts.
import { provideTestServices } from './test-services';

export default async function globalSetup(): Promise<void> {
  try {
    await provideTestServices();
  } catch (error) {
    // The message says what is wrong and what to do; a stack trace would only bury it.
    if (error instanceof Error) error.stack = '';
    throw error;
  }
}
