import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import type { Floodgate } from '@floodgate/core';
import { sendRaw } from '../http/raw-client';
import { openEditingPage, type EditingPage } from './support/page-app';

// The rule forms in a real Chromium, against a real Express app that puts every route under guard
// (`everyRoute: true`) with no rule in code: rules added, edited and deleted from the page limit
// its routes at once, per client address (connections from 127.0.0.2 and 127.0.0.3) and per header
// value. Engine time is a ManualClock: no limit refills while the test runs.

const TOKEN = 'correct-horse-battery-staple';
const XSS = '<img src=x onerror=alert(1)>';
const A = '127.0.0.2';
const B = '127.0.0.3';
const WAIT = { timeout: 10_000 };
jest.setTimeout(30_000);

let opened: EditingPage;
let page: Page;
let server: Server;
let fg: Floodgate;

/** The app's loaded rules of a kind. */
const loaded = (kind: string) =>
  fg
    .describeRules()
    .filter((d) => d.layer === 'loaded' && d.kind === kind)
    .map((d) => d.rule);
const get = (path: string, from: string, headers: Record<string, string> = {}) =>
  sendRaw(server, 'GET', path, headers, from);

beforeAll(async () => {
  opened = await openEditingPage(TOKEN, (app) => {
    app.get('/users/:id', (req, res) => void res.json({ id: req.params.id }));
    app.get('/health', (_req, res) => void res.json({ ok: true }));
  });
  ({ page, server, fg } = opened);
}, 60_000);

afterAll(() => opened?.close());

const field = (name: string) => page.locator(`#rule-fields [data-field="${name}"]`);
const input = (name: string) => field(name).locator('input, select, textarea').first();
const row = (kind: string, index: number) =>
  page.locator(`#loaded-rules tbody tr[data-kind="${kind}"][data-index="${index}"]`);

async function addForm(kind: string): Promise<void> {
  await page.selectOption('#add-kind', kind);
  await page.click('#add-rule');
  await page.locator('#rule-form-title', { hasText: `Add a ${kind} rule` }).waitFor(WAIT);
}

async function saved(text: string): Promise<void> {
  await page.click('#rule-save');
  await page.locator('#edit-status.ok', { hasText: text }).waitFor(WAIT);
}

describe('the rule forms in Chromium', () => {
  it('adds a per-IP limit to an unguarded route from the form: one client is answered 429, another passes', async () => {
    expect([await get('/users/1', A), await get('/users/2', A), await get('/users/3', A)]).toEqual([200, 200, 200]);
    await addForm('hotParams');
    // The resource is picked from those the engine has seen.
    await input('resource').fill('users');
    await field('resource').locator('.picker button.pick', { hasText: 'GET /users/:id' }).click();
    await expect(input('resource').inputValue()).resolves.toBe('GET /users/:id');
    await input('key.from').selectOption('ip');
    await field('key.ipv6Subnet').waitFor({ state: 'visible', ...WAIT });
    expect(await field('key.name').isHidden()).toBe(true);
    expect(await field('paramIndex').isHidden()).toBe(true);
    await expect(input('durationMs').getAttribute('placeholder')).resolves.toBe('1000');
    await input('threshold').fill('1');
    await saved('Rule added through engine');
    await row('hotParams', 0).waitFor(WAIT);
    expect(loaded('hotParams')).toEqual([
      expect.objectContaining({ resource: 'GET /users/:id', key: { from: 'ip', ipv6Subnet: 56 }, threshold: 1 }),
    ]);
    expect([await get('/users/1', A), await get('/users/2', A)]).toEqual([200, 429]);
    expect(await get('/users/1', B)).toBe(200);
    expect(await get('/health', A)).toBe(200);
    expect(await page.locator('#rule-form').isHidden()).toBe(true);
  });

  it('edits a rule in its form, filled with its values, and the new limit holds per header value', async () => {
    await row('hotParams', 0).locator('button.edit').click();
    await page.locator('#rule-form-title', { hasText: 'Edit hotParams[0]' }).waitFor(WAIT);
    await expect(input('threshold').inputValue()).resolves.toBe('1');
    await expect(input('key.from').inputValue()).resolves.toBe('ip');
    await expect(input('key.ipv6Subnet').inputValue()).resolves.toBe(''); // its default, left to the engine
    await input('key.from').selectOption('header');
    await input('key.name').fill('X-Api-Key');
    await input('threshold').fill('2');
    await saved('Rule replaced through engine');
    expect(loaded('hotParams')).toEqual([
      expect.objectContaining({ key: { from: 'header', name: 'x-api-key' }, threshold: 2 }),
    ]);
    const key = (value: string) => ({ 'x-api-key': value });
    expect([await get('/users/1', A, key('k1')), await get('/users/1', B, key('k1'))]).toEqual([200, 200]);
    expect(await get('/users/1', A, key('k1'))).toBe(429);
    expect(await get('/users/1', A, key('k2'))).toBe(200);
  });

  it("shows the engine's validation next to each field, other problems in the form's list, and applies nothing", async () => {
    await addForm('flow');
    await input('resource').fill('GET /health');
    await input('threshold').fill('-1');
    await input('behavior').selectOption('warmUp');
    await field('warmUpPeriodMs').waitFor({ state: 'visible', ...WAIT });
    await page.click('#rule-save');
    await field('threshold').locator('.field-issue', { hasText: 'must be a finite number >= 0, got -1' }).waitFor(WAIT);
    await expect(field('warmUpPeriodMs').locator('.field-issue').textContent()).resolves.toContain('is required');
    await expect(page.locator('#edit-status.fail').textContent()).resolves.toBe('Rule rejected; nothing was applied');
    expect(loaded('flow')).toEqual([]);
    // A problem of the rule itself, no field's: in the form's own list.
    await page.click('#rule-cancel');
    await addForm('hotParams');
    await input('resource').fill('GET /health');
    await input('threshold').fill('1');
    await page.click('#rule-save');
    await page
      .locator('#rule-issues li', {
        hasText: 'hotParams[1]: needs exactly one of paramIndex, paramKey and key, got none',
      })
      .waitFor(WAIT);
    await page.click('#rule-cancel');
  });

  it('refuses a save made on rules that changed since the form was opened, and says so', async () => {
    await row('hotParams', 0).locator('button.edit').click();
    await page.locator('#rule-form-title', { hasText: 'Edit hotParams[0]' }).waitFor(WAIT);
    fg.loadRules(
      { authority: [{ resource: 'GET /health', origins: ['someone'], strategy: 'deny' }] },
      { source: 'dashboard' },
    );
    await input('threshold').fill('50');
    await page.click('#rule-save');
    await page.locator('#edit-status.fail', { hasText: 'The loaded rules changed since version' }).waitFor(WAIT);
    expect(loaded('hotParams')).toEqual([expect.objectContaining({ threshold: 2 })]);
    await page.click('#rule-cancel');
    await row('authority', 0).waitFor(WAIT);
  });

  it('deletes a rule on a second click, and the route is unguarded again', async () => {
    await row('hotParams', 0).locator('button.delete').click();
    await row('hotParams', 0).locator('button.delete', { hasText: 'Confirm delete' }).click();
    await page.locator('#edit-status.ok', { hasText: 'Rule deleted through engine' }).waitFor(WAIT);
    await row('hotParams', 0).waitFor({ state: 'detached', ...WAIT });
    expect(loaded('hotParams')).toEqual([]);
    const key = { 'x-api-key': 'k1' };
    expect([await get('/users/1', A, key), await get('/users/1', A, key), await get('/users/1', A, key)]).toEqual([
      200, 200, 200,
    ]);
  });

  it('refuses the JSON of the whole layer when the rules changed since it was read', async () => {
    await page.locator('#raw-editor summary').click();
    await page.fill('#rules-json', JSON.stringify({ flow: [{ resource: 'GET /health', threshold: 1 }] }));
    fg.loadRules({ authority: [] }, { source: 'dashboard' });
    await page.click('#apply');
    await page.locator('#edit-status.fail', { hasText: 'The loaded rules changed since version' }).waitFor(WAIT);
    expect(loaded('flow')).toEqual([]);
    await page.click('#revert');
    await page.fill('#rules-json', JSON.stringify({ flow: [{ resource: 'GET /health', threshold: 1 }] }));
    await page.click('#apply');
    await page.locator('#edit-status.ok', { hasText: 'Rules applied through engine' }).waitFor(WAIT);
    expect(loaded('flow')).toEqual([expect.objectContaining({ resource: 'GET /health' })]);
    await page.locator('#raw-editor summary').click();
  });

  it('shows resource names and rule fields that hold HTML as text in the list, the form and the picker, and runs none of it', async () => {
    fg.tryEntry(XSS);
    fg.loadRules({ flow: [{ resource: XSS, threshold: 1, limitOrigin: XSS }] }, { source: 'dashboard' });
    await row('flow', 0).locator('.resource', { hasText: XSS }).waitFor(WAIT);
    await expect(row('flow', 0).locator('.resource').textContent()).resolves.toBe(XSS);
    await row('flow', 0).locator('button.edit').click();
    await expect(input('resource').inputValue()).resolves.toBe(XSS);
    await expect(input('limitOrigin').inputValue()).resolves.toBe(XSS);
    await input('resource').fill('<img');
    await field('resource').locator('.picker button.pick', { hasText: XSS }).waitFor(WAIT);
    await expect(field('resource').locator('.picker button.pick').first().textContent()).resolves.toBe(XSS);
    await page.click('#rule-cancel');
    expect(await page.locator('main img').count()).toBe(0);
    expect(opened.dialogs).toEqual([]);
  });
});
