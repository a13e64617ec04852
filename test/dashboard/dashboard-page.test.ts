import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { Floodgate, ManualClock } from '@floodgate/core';
import { dashboard, type Dashboard } from '@floodgate/dashboard';
import { blockErrorHandler, resilience } from '@floodgate/express';
import { launchChromium } from './support/browser';

// The page in a real Chromium against a real Express app with real traffic. Engine time is a
// ManualClock (breakers open and close because the test moves time); the page is updated
// every 100 ms of real time, and the test waits for what it expects to appear.

const TOKEN = 'correct-horse-battery-staple';
const XSS = '<img src=x onerror=alert(1)>';
const WAIT = { timeout: 10_000 };
jest.setTimeout(30_000);

let browser: Browser;
let page: Page;
let server: Server;
let clock: ManualClock;
let fg: Floodgate;
let dash: Dashboard;
let base: string;
let failing = false;
const dialogs: string[] = [];

beforeAll(async () => {
  clock = new ManualClock(100_000);
  fg = new Floodgate({ clock });
  dash = dashboard(fg, { token: TOKEN, intervalMs: 100 });
  const app = express();
  app.use('/floodgate', dash.express());
  app.use(
    resilience({
      floodgate: fg,
      routes: {
        'GET /hello': { rateLimit: { threshold: 1000 } },
        'GET /flaky': {
          circuitBreaker: { strategy: 'errorCount', threshold: 1, minRequestAmount: 2, retryTimeoutMs: 5000 },
        },
      },
    }),
  );
  app.get('/hello', (_req, res) => void res.json({ hello: 'world' }));
  app.get('/flaky', (_req, res) => void res.status(failing ? 500 : 200).json({ failing }));
  app.use(blockErrorHandler({ floodgate: fg }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(`${base}/floodgate`);
  await page.locator('#connection.live').waitFor(WAIT);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  dash?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const card = (resource: string) => page.locator('.card').filter({ has: page.locator('.name', { hasText: resource }) });
const figure = (resource: string, name: string) => card(resource).locator(`[data-figure="${name}"]`);

async function applyRules(rules: unknown, token = TOKEN): Promise<void> {
  await page.fill('#rules-json', typeof rules === 'string' ? rules : JSON.stringify(rules));
  await page.fill('#token', token);
  await page.click('#apply');
}

describe('the dashboard page in Chromium', () => {
  it('loads from the mount point, live, with the rules that code declared', async () => {
    expect(page.url()).toBe(`${base}/floodgate/`);
    const row = page.locator('#rules tbody tr', { hasText: 'GET /flaky' });
    await expect(row.locator('.source').textContent()).resolves.toBe('declared by code (read-only)');
    await expect(row.locator('.status').textContent()).resolves.toBe('in force');
    await expect(page.locator('#edit-mode').textContent()).resolves.toContain(
      'Edits apply to this instance through loadRules',
    );
  });

  it('shows a resource after traffic, with its pass rate once the second completes', async () => {
    for (let i = 0; i < 7; i++) await request(server).get('/hello').expect(200);
    await card('GET /hello').waitFor(WAIT);
    await clock.advance(1000);
    await figure('GET /hello', 'pass').filter({ hasText: /^7$/ }).waitFor(WAIT);
    await expect(figure('GET /hello', 'block').textContent()).resolves.toBe('0');
  });

  it('shows a breaker open, then closed again, with its transitions', async () => {
    failing = true;
    await request(server).get('/flaky').expect(500);
    await request(server).get('/flaky').expect(500);
    await request(server).get('/flaky').expect(503);
    const breaker = page.locator('#breakers tbody tr', { hasText: 'GET /flaky' });
    await breaker.locator('.state.open').waitFor(WAIT);
    await clock.advance(5000);
    failing = false;
    await request(server).get('/flaky').expect(200);
    await breaker.locator('.state.closed').waitFor(WAIT);
    const transitions = await breaker.locator('.transitions li').allTextContents();
    expect(transitions.map((t) => t.split(',')[0])).toEqual([
      'halfOpen → closed',
      'open → halfOpen',
      'closed → open (2)',
    ]);
    await page.locator('#blocks tbody tr', { hasText: 'ERR_CIRCUIT_OPEN' }).first().waitFor(WAIT);
  });

  it('applies an edited rule, and the next requests obey the new limit', async () => {
    await clock.advance(1000);
    await applyRules({ flow: [{ resource: 'GET /hello', threshold: 2 }] });
    await page.locator('#edit-status.ok', { hasText: 'Rules applied through engine' }).waitFor(WAIT);
    await request(server).get('/hello').expect(200);
    await request(server).get('/hello').expect(200);
    await request(server).get('/hello').expect(429);
    const rows = page.locator('#rules tbody tr', { hasText: 'GET /hello' });
    await rows.locator('.source', { hasText: 'loaded (dashboard)' }).waitFor(WAIT);
    const declared = rows.filter({ has: page.locator('.source', { hasText: 'declared by code' }) });
    await expect(declared.locator('.status').textContent()).resolves.toBe(
      'shadowed: loaded rules of this kind and resource take precedence',
    );
    expect(fg.describeRules()).toContainEqual(
      expect.objectContaining({ resource: 'GET /hello', layer: 'loaded', source: 'dashboard' }),
    );
  });

  it('shows the validation errors of a bad rule by path, and applies nothing', async () => {
    await applyRules({
      flow: [
        { resource: 'GET /hello', threshold: -1 },
        { resource: 'GET /hello', threshold: 1, behavior: 'fast' },
      ],
    });
    await page.locator('#issues li').first().waitFor(WAIT);
    const issues = await page.locator('#issues li').allTextContents();
    expect(issues).toEqual([
      'flow[0].threshold: must be a finite number >= 0, got -1',
      "flow[1].behavior: must be one of 'reject', 'warmUp', 'throttle', 'warmUpThrottle', 'adaptive', got \"fast\"",
    ]);
    await expect(page.locator('#edit-status').textContent()).resolves.toBe('Rules rejected; nothing was applied');
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'GET /hello', threshold: 2 })]);
  });

  it('shows JSON that does not parse as an issue of the whole rule set', async () => {
    await applyRules('{ "flow": [');
    await page.locator('#issues li', { hasText: '(whole rule set): is not valid JSON' }).waitFor(WAIT);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 2 })]);
  });

  it('refuses an edit without the right token', async () => {
    await applyRules({ flow: [] }, 'wrong-token');
    await page.locator('#edit-status.fail', { hasText: 'A valid token is required' }).waitFor(WAIT);
    await applyRules({ flow: [] }, '');
    await page.locator('#edit-status.fail', { hasText: 'A valid token is required' }).waitFor(WAIT);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 2 })]);
  });

  it('shows a resource and a rule named with HTML as text, and runs none of it', async () => {
    fg.loadHotParamRules([{ resource: XSS, paramIndex: 0, threshold: 1 }], { source: XSS });
    fg.entry(XSS, { args: ['a'] }).exit();
    fg.tryEntry(XSS, { args: ['a'] });
    await card(XSS).waitFor(WAIT);
    await page.locator('#blocks tbody tr .resource', { hasText: XSS }).first().waitFor(WAIT);
    await expect(card(XSS).locator('.name').textContent()).resolves.toBe(XSS);
    await expect(page.locator('#rules tbody tr .resource', { hasText: XSS }).textContent()).resolves.toBe(XSS);
    await expect(page.locator('#rules tbody tr .source', { hasText: XSS }).textContent()).resolves.toBe(
      `loaded (${XSS})`,
    );
    expect(await page.locator('main img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('says it is read-only and offers no edit when no token is configured', async () => {
    const readOnly = dashboard(fg, { intervalMs: 100 });
    const app = express();
    app.use('/ro', readOnly.express());
    const other = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    const second = await browser.newPage();
    try {
      await second.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/ro/`);
      await second
        .locator('#edit-mode', { hasText: 'Read-only: this dashboard has no token configured' })
        .waitFor(WAIT);
      expect(await second.locator('#apply').isDisabled()).toBe(true);
    } finally {
      await second.close();
      readOnly.close();
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
