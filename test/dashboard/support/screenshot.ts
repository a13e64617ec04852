/**
 * Takes the README's screenshot of the dashboard (docs/dashboard.png): starts the dashboard
 * demo (examples/express/dashboard-demo.ts), lets its traffic run long enough for the
 * recommendations breaker to open and close, opens the form of a per-client-address hotspot rule
 * on a route, and photographs the whole page in Debian's Chromium.
 * Run: `npx tsx --conditions=@floodgate/source test/dashboard/support/screenshot.ts [seconds=32] [out=docs/dashboard.png]`.
 */
import { startDashboardDemo } from '../../../examples/express/dashboard-demo';
import { launchChromium } from './browser';

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 32);
  const out = process.argv[3] ?? 'docs/dashboard.png';
  const demo = await startDashboardDemo();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1500 } });
    await page.goto(demo.url);
    await page.waitForTimeout(seconds * 1000);
    await page.selectOption('#add-kind', 'hotParams');
    await page.click('#add-rule');
    const field = (name: string) =>
      page.locator(`#rule-fields [data-field="${name}"]`).locator('input, select').first();
    await field('resource').fill('GET /users/:id');
    await field('key.from').selectOption('ip');
    await field('threshold').fill('20');
    await page.waitForTimeout(500);
    await page.screenshot({ path: out, fullPage: true });
    console.log(`Saved ${out}`);
  } finally {
    await browser.close();
    await demo.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
