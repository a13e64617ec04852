import { chromium, type Browser } from 'playwright-core';
import { serviceBinary } from '../../support/test-services';

/**
 * Launches the system's headless Chromium as `npm test` provides it (FLOODGATE_CHROMIUM_BIN; never
 * a downloaded browser) with the flags this machine needs, in a fresh profile. Fails naming the
 * command to run when it is absent.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: serviceBinary('chromium'),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
