import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import type { Floodgate } from '@floodgate/core';
import { sendRaw } from '../http/raw-client';
import { openEditingPage, type EditingPage } from './support/page-app';

// A limit rolled out from the rule form in a real Chromium, against a real Express app that
// guards every route (`everyRoute: true`): added in shadow (every request passes, the rule reports
// what it would refuse), then enforced on a share, then on everything, each step a save of the
// form. Engine time is a ManualClock: the window never refills while the test runs.

const TOKEN = 'correct-horse-battery-staple';
const WAIT = { timeout: 20_000 };
jest.setTimeout(60_000);

let opened: EditingPage;
let page: Page;
let server: Server;
let fg: Floodgate;

const loaded = () =>
  fg
    .describeRules()
    .filter((d) => d.layer === 'loaded' && d.kind === 'flow')
    .map((d) => d.rule);
const get = (path: string) => sendRaw(server, 'GET', path, {}, '127.0.0.2');

beforeAll(async () => {
  opened = await openEditingPage(TOKEN, (app) => {
    app.get('/report', (_req, res) => void res.json({ ok: true }));
  });
  ({ page, server, fg } = opened);
}, 60_000);

afterAll(() => opened?.close());

const field = (name: string) => page.locator(`#rule-fields [data-field="${name}"]`);
const input = (name: string) => field(name).locator('input, select, textarea').first();
const row = (index: number) => page.locator(`#loaded-rules tbody tr[data-kind="flow"][data-index="${index}"]`);

async function saved(text: string): Promise<void> {
  await page.click('#rule-save');
  await page.locator('#edit-status.ok', { hasText: text }).waitFor(WAIT);
}

describe('a limit rolled out from the rule form in Chromium', () => {
  it('adds a rule in shadow: it refuses nothing, and enforcePercent is not offered beside it', async () => {
    expect(await get('/report')).toBe(200);
    await page.selectOption('#add-kind', 'flow');
    await page.click('#add-rule');
    await page.locator('#rule-form-title', { hasText: 'Add a flow rule' }).waitFor(WAIT);
    // The default mode is named in the empty choice.
    await expect(input('mode').locator('option[value=""]').textContent()).resolves.toBe('(default: enforce)');
    await field('enforcePercent').waitFor({ state: 'visible', ...WAIT });
    await input('resource').fill('GET /report');
    await input('threshold').fill('1');
    await input('mode').selectOption('shadow');
    await field('enforcePercent').waitFor({ state: 'hidden', ...WAIT });
    await saved('Rule added through engine');
    await row(0).waitFor(WAIT);
    expect(loaded()).toEqual([expect.objectContaining({ resource: 'GET /report', threshold: 1, mode: 'shadow' })]);
    expect([await get('/report'), await get('/report'), await get('/report')]).toEqual([200, 200, 200]);
  });

  it('enforces it on a share, then on everything, by editing the form', async () => {
    await row(0).locator('button.edit').click();
    await page.locator('#rule-form-title', { hasText: 'Edit flow[0]' }).waitFor(WAIT);
    await expect(input('mode').inputValue()).resolves.toBe('shadow');
    await input('mode').selectOption('enforce');
    await input('enforcePercent').fill('50');
    await saved('Rule replaced through engine');
    // `mode: 'enforce'` is the default: the rule in force carries only the share.
    expect(loaded()).toEqual([expect.objectContaining({ threshold: 1, enforcePercent: 50 })]);
    expect(loaded()[0]).not.toHaveProperty('mode');

    await row(0).locator('button.edit').click();
    await page.locator('#rule-form-title', { hasText: 'Edit flow[0]' }).waitFor(WAIT);
    await expect(input('enforcePercent').inputValue()).resolves.toBe('50');
    await input('enforcePercent').fill('');
    await saved('Rule replaced through engine');
    const [rule] = loaded();
    expect(rule).toEqual(expect.objectContaining({ resource: 'GET /report', threshold: 1 }));
    expect(rule).not.toHaveProperty('enforcePercent');
    expect(rule).not.toHaveProperty('mode');
    // Enforced on everything: the window (never refilled) already holds more than the threshold.
    expect(await get('/report')).toBe(429);
  });
});
