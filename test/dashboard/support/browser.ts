import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Chromium as `npm test` provides it (FLOODGATE_CHROMIUM_BIN), else Debian's. */
export const CHROMIUM_BIN = process.env.FLOODGATE_CHROMIUM_BIN ?? '/usr/bin/chromium';

/**
 * Launches the system's headless Chromium (never a downloaded browser) with the flags this
 * machine needs, in a fresh profile. Fails naming the package to install when it is absent.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_BIN)) {
    throw new Error(`Chromium not found at ${CHROMIUM_BIN}: install it with \`apt-get install -y chromium\` or set FLOODGATE_CHROMIUM_BIN`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_BIN,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
