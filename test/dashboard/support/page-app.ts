import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import type { Browser, Locator, Page } from 'playwright-core';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { dashboard } from '@floodgate/dashboard';
import { blockErrorHandler, resilience } from '@floodgate/express';
import { launchChromium } from './browser';
import { shows } from './page-wait';

/** An app serving the dashboard, and a real Chromium page showing it, live. */
/** The card of a charted resource on the page. */
export function resourceCard(page: Page, resource: string): Locator {
  return page.locator('.card').filter({ has: page.locator('.name', { hasText: resource }) });
}

/** One figure (`pass`, `block`, `wouldBlock`, ...) of a charted resource's card. */
export function resourceFigure(page: Page, resource: string, name: string): Locator {
  return resourceCard(page, resource).locator(`[data-figure="${name}"]`);
}

export interface DashboardPage {
  readonly server: Server;
  /** The app's origin, `http://127.0.0.1:<port>`. */
  readonly base: string;
  readonly browser: Browser;
  readonly page: Page;
  /** The messages of every dialog the page opened (dismissed): an `alert()` an XSS ran shows here. */
  readonly dialogs: readonly string[];
  close(): Promise<void>;
}

/** Serves `app` on 127.0.0.1, opens `path` (the dashboard's mount) in Chromium, and waits until the page is live. */
export async function openDashboardPage(app: Express, path: string): Promise<DashboardPage> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  const page = await browser.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(`${base}${path}`);
  await shows(page.locator('#connection.live'), 'its live feed connected');
  return {
    server,
    base,
    browser,
    page,
    dialogs,
    close: async () => {
      await browser.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** An app with every route under guard and the dashboard at `/floodgate`, open in Chromium with the token typed in. */
export interface EditingPage extends DashboardPage {
  /** The app's engine, on a ManualClock. */
  readonly fg: Floodgate;
}

/**
 * Builds an Express app on a new engine (a ManualClock: no limit refills) with the dashboard
 * (`token`, limits high enough for a test's reads and edits) at `/floodgate`, then
 * `resilience({ everyRoute: true })`, then the routes `routes` adds; opens it in Chromium and
 * types the token in.
 */
export async function openEditingPage(token: string, routes: (app: Express) => void): Promise<EditingPage> {
  const fg = new Floodgate({ clock: new ManualClock(100_000) });
  const dash = dashboard(fg, { token, intervalMs: 100, readsPerSecond: 100_000, editsPerSecond: 1000 });
  const app = express();
  app.use('/floodgate', dash.express());
  app.use(resilience({ floodgate: fg, everyRoute: true }));
  routes(app);
  app.use(blockErrorHandler({ floodgate: fg }));
  const opened = await openDashboardPage(app, '/floodgate/');
  await opened.page.fill('#token', token);
  return {
    ...opened,
    fg,
    close: async () => {
      await opened.close();
      dash.close();
    },
  };
}
