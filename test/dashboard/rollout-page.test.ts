import type { Server } from 'node:http';
import express from 'express';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { dashboard, type Dashboard } from '@floodgate/dashboard';
import { resilience } from '@floodgate/express';
import { openDashboardPage, resourceCard, resourceFigure, type DashboardPage } from './support/page-app';

// Rules in shadow on the page in a real Chromium, against a real Express app: the rule marked,
// and its would-be blocks per second charted beside the passes. Engine time is a ManualClock.

const WAIT = { timeout: 10_000 };
jest.setTimeout(30_000);

let opened: DashboardPage;
let page: Page;
let server: Server;
let clock: ManualClock;
let fg: Floodgate;
let dash: Dashboard;

beforeAll(async () => {
  clock = new ManualClock(100_000);
  fg = new Floodgate({ clock });
  fg.loadRules({ flow: [{ resource: 'GET /try', threshold: 1, mode: 'shadow' }] });
  dash = dashboard(fg, { intervalMs: 100 });
  const app = express();
  app.use('/floodgate', dash.express());
  app.use(resilience({ floodgate: fg, routes: { 'GET /try': {} } }));
  app.get('/try', (_req, res) => void res.json({ ok: true }));
  opened = await openDashboardPage(app, '/floodgate');
  ({ server, page } = opened);
}, 60_000);

afterAll(async () => {
  await opened?.close();
  dash?.close();
});

const card = (resource: string) => resourceCard(page, resource);
const figure = (resource: string, name: string) => resourceFigure(page, resource, name);
const ruleRow = (resource: string) => page.locator('#rules tbody tr', { hasText: resource });

describe('rules in shadow on the dashboard page in Chromium', () => {
  it('marks a shadow rule as watching only', async () => {
    await ruleRow('GET /try').locator('.badge.rollout', { hasText: 'shadow: watch only' }).waitFor(WAIT);
  });

  it('charts the would-be blocks per second of a shadow rule, while every request passes', async () => {
    // The page samples the resource once before its would-be blocks are counted.
    await request(server).get('/try').expect(200);
    await card('GET /try').waitFor(WAIT);
    await clock.advance(1000);
    for (let i = 0; i < 5; i++) await request(server).get('/try').expect(200);
    await clock.advance(1000);
    await figure('GET /try', 'pass').filter({ hasText: /^5$/ }).waitFor(WAIT);
    await expect(figure('GET /try', 'wouldBlock').textContent()).resolves.toBe('4');
    await expect(figure('GET /try', 'block').textContent()).resolves.toBe('0');
  });

  it('marks a rule enforcing a share by its percentage after a reload', async () => {
    fg.loadRules({ flow: [{ resource: 'GET /try', threshold: 1, enforcePercent: 10 }] });
    await ruleRow('GET /try').locator('.badge.rollout', { hasText: 'enforces 10%' }).waitFor(WAIT);
  });
});
