import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { dashboard, type Dashboard, type DashboardOptions } from '@floodgate/dashboard';
import { blockErrorHandler, resilience } from '@floodgate/express';
import { openDashboardPage, resourceCard, resourceFigure, type DashboardPage } from './support/page-app';
import { until } from '../support/until';

// The page in a real Chromium against a real Express app with real traffic. Engine time is a
// ManualClock (breakers open and close because the test moves time); the page is updated
// every 100 ms of real time, and the test waits for what it expects to appear.

const TOKEN = 'correct-horse-battery-staple';
const XSS = '<img src=x onerror=alert(1)>';
const WAIT = { timeout: 10_000 };
jest.setTimeout(30_000);
/** The app's flow rules, without the dashboard's own (DASHBOARD_RESOURCES). */
const appFlow = (engine: Floodgate) =>
  engine.getRules().flow.filter((rule) => !rule.resource.startsWith('floodgate-dashboard:'));
/** The app's rules, without the dashboard's own. */
const appRules = (engine: Floodgate) =>
  engine.describeRules().filter((d) => !d.resource.startsWith('floodgate-dashboard:'));

let opened: DashboardPage;
let browser: Browser;
let page: Page;
let server: Server;
let clock: ManualClock;
let fg: Floodgate;
let dash: Dashboard;
let base: string;
let failing = false;

beforeAll(async () => {
  clock = new ManualClock(100_000);
  fg = new Floodgate({ clock });
  dash = dashboard(fg, { token: TOKEN, intervalMs: 100 });
  const app = express();
  app.use('/floodgate', dash.express());
  app.use(
    resilience({
      floodgate: fg,
      priority: { header: 'x-priority', max: 'critical' },
      routes: {
        'GET /hello': { rateLimit: { threshold: 1000 } },
        // guarded, with no rule of its own: a test loads one (declared rules are in every test's list)
        'GET /batch': {},
        'GET /flaky': {
          circuitBreaker: { strategy: 'errorCount', threshold: 1, minRequestAmount: 2, retryTimeoutMs: 5000 },
        },
      },
    }),
  );
  app.get('/hello', (_req, res) => void res.json({ hello: 'world' }));
  app.get('/flaky', (_req, res) => void res.status(failing ? 500 : 200).json({ failing }));
  app.get('/batch', (_req, res) => void res.json({ batch: true }));
  app.use(blockErrorHandler({ floodgate: fg }));
  opened = await openDashboardPage(app, '/floodgate');
  ({ server, base, browser, page } = opened);
}, 60_000);

afterAll(async () => {
  await opened?.close();
  dash?.close();
});

const card = (resource: string) => resourceCard(page, resource);
const figure = (resource: string, name: string) => resourceFigure(page, resource, name);

async function applyRules(rules: unknown, token = TOKEN): Promise<void> {
  await page.locator('#raw-editor').evaluate((details) => details.setAttribute('open', ''));
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

  it("shows a resource's blocks by priority once a call claimed one, and no such line before", async () => {
    // the card is there (from the traffic above), its priority line present but hidden
    await expect(card('GET /hello').locator('.priorities').count()).resolves.toBe(1);
    await expect(card('GET /hello').locator('.priorities').isHidden()).resolves.toBe(true);
    // replaced by the next test's edit, which loads the flow rules anew
    fg.loadFlowRules([{ resource: 'GET /batch', threshold: 0 }]);
    for (const priority of ['sheddable', 'sheddable', 'critical'])
      await request(server).get('/batch').set('x-priority', priority).expect(429);
    await request(server).get('/batch').expect(429);
    await card('GET /batch')
      .locator('.priorities', { hasText: 'blocked by priority: critical 1 · default 1 · sheddable 2' })
      .waitFor(WAIT);
    // GET /hello's calls were all 'default': it still shows none
    await expect(card('GET /hello').locator('.priorities').isHidden()).resolves.toBe(true);
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
    expect(appRules(fg)).toContainEqual(
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
    expect(appFlow(fg)).toEqual([expect.objectContaining({ resource: 'GET /hello', threshold: 2 })]);
  });

  it('shows JSON that does not parse as an issue of the whole rule set', async () => {
    await applyRules('{ "flow": [');
    await page.locator('#issues li', { hasText: '(whole rule set): is not valid JSON' }).waitFor(WAIT);
    expect(appFlow(fg)).toEqual([expect.objectContaining({ threshold: 2 })]);
  });

  it('refuses an edit without the right token', async () => {
    await applyRules({ flow: [] }, 'wrong-token');
    await page.locator('#edit-status.fail', { hasText: 'A valid token is required' }).waitFor(WAIT);
    await applyRules({ flow: [] }, '');
    await page.locator('#edit-status.fail', { hasText: 'A valid token is required' }).waitFor(WAIT);
    expect(appFlow(fg)).toEqual([expect.objectContaining({ threshold: 2 })]);
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
    expect(opened.dialogs).toEqual([]);
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

  it('fills the editor with the loaded rules, and again when they change while it is untouched', async () => {
    await page.click('#revert');
    fg.loadAuthorityRules([{ resource: 'GET /hello', origins: ['blocked-app'], strategy: 'deny' }]);
    await until(async () => (await page.inputValue('#rules-json')).includes('blocked-app'), 'the editor', 10_000);
    const layer = JSON.parse(await page.inputValue('#rules-json'));
    expect(Object.keys(layer)).toEqual(Object.keys(new Floodgate().getRules()));
    expect(layer.flow).toEqual([expect.objectContaining({ resource: 'GET /hello', threshold: 2 })]);
  });
});

/** Another dashboard on its own engine and app, in a new browser page. */
interface Another {
  readonly engine: Floodgate;
  readonly view: Page;
  readonly url: string;
  close(): Promise<void>;
}

async function another(options: DashboardOptions): Promise<Another> {
  const engine = new Floodgate({ clock });
  const dash = dashboard(engine, { intervalMs: 100, ...options });
  const app = express();
  app.use('/fg', dash.express());
  const other = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => other.once('listening', resolve));
  const view = await browser.newPage();
  return {
    engine,
    view,
    url: `http://127.0.0.1:${(other.address() as AddressInfo).port}/fg/`,
    close: async () => {
      await view.close();
      dash.close();
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    },
  };
}

describe('the dashboard page in pages', () => {
  it('shows resources a page at a time, and moves between the pages', async () => {
    const { engine, view, url, close } = await another({ pageSize: 2 });
    try {
      for (const name of ['alpha', 'beta', 'gamma', 'delta']) engine.tryEntry(name);
      await view.goto(url);
      await view.locator('#resources-page', { hasText: 'page 1 of 3' }).waitFor(WAIT);
      expect(await view.locator('.card .name').allTextContents()).toEqual(['alpha', 'beta']);
      expect(await view.locator('#resources-prev').isDisabled()).toBe(true);
      await view.click('#resources-next');
      await view.locator('#resources-page', { hasText: 'page 2 of 3' }).waitFor(WAIT);
      await view.locator('.card .name', { hasText: 'gamma' }).waitFor(WAIT);
      expect(await view.locator('.card .name').allTextContents()).toEqual(['gamma', 'delta']);
      await view.click('#resources-prev');
      await view.locator('.card .name', { hasText: 'alpha' }).waitFor(WAIT);
    } finally {
      await close();
    }
  });

  it('shows rules a page at a time, and moves between the pages', async () => {
    const { engine, view, url, close } = await another({ pageSize: 2 });
    try {
      engine.loadFlowRules(['r1', 'r2', 'r3'].map((resource) => ({ resource, threshold: 1 })));
      await view.goto(url);
      await view.locator('#rules-page', { hasText: 'page 1 of 3' }).waitFor(WAIT); // with the dashboard's own two
      expect(await view.locator('#rules tbody .resource').allTextContents()).toEqual(['r1', 'r2']);
      await view.click('#rules-next');
      await view.locator('#rules-page', { hasText: 'page 2 of 3' }).waitFor(WAIT);
      expect(await view.locator('#rules tbody .resource').allTextContents()).toEqual([
        'r3',
        'floodgate-dashboard:read',
      ]);
      await expect(view.locator('#summary').textContent()).resolves.toContain('5 rules');
    } finally {
      await close();
    }
  });

  it('asks for the read token when reads need one, and reads once it is given', async () => {
    const { engine, view, url, close } = await another({ readToken: 'reader-secret' });
    try {
      engine.tryEntry('secret-resource');
      await view.goto(url);
      await view.locator('#read-token-form').waitFor({ state: 'visible', ...WAIT });
      expect(await view.locator('.card').count()).toBe(0);
      await view.fill('#read-token', 'wrong');
      await view.click('#read-token-form button');
      await view.locator('#connection', { hasText: 'token needed' }).waitFor(WAIT);
      await view.fill('#read-token', 'reader-secret');
      await view.click('#read-token-form button');
      await view.locator('#connection.live').waitFor(WAIT);
      await view.locator('.card .name', { hasText: 'secret-resource' }).waitFor(WAIT);
      expect(await view.locator('#read-token-form').isHidden()).toBe(true);
    } finally {
      await close();
    }
  });
});
