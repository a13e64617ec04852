import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import type { Floodgate } from '@floodgate/core';
import { sendRaw } from '../http/raw-client';
import { openEditingPage, type EditingPage } from './support/page-app';
import { holds, PAGE_TEST_TIMEOUT_MS, shows } from './support/page-wait';
import { ruleForm, type RuleForm } from './support/rule-form';

// The rule forms in a real Chromium, against a real Express app that puts every route under guard
// (`everyRoute: true`) with no rule in code: rules added, edited and deleted from the page limit
// its routes at once, per client address (connections from 127.0.0.2 and 127.0.0.3) and per header
// value. Engine time is a ManualClock: no limit refills while the test runs.

const TOKEN = 'correct-horse-battery-staple';
const XSS = '<img src=x onerror=alert(1)>';
const A = '127.0.0.2';
const B = '127.0.0.3';
jest.setTimeout(PAGE_TEST_TIMEOUT_MS);

let opened: EditingPage;
let page: Page;
let server: Server;
let fg: Floodgate;
let form: RuleForm;

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
  form = ruleForm(page);
}, PAGE_TEST_TIMEOUT_MS);

afterAll(() => opened?.close());

const field = (name: string) => form.field(name);
const input = (name: string) => form.input(name);
const row = (kind: string, index: number) => form.row(kind, index);
/** The page says the loaded rules changed since the version its edit was made on, and applies nothing. */
const STALE = { ok: false, text: expect.stringContaining('The loaded rules changed since version') };

describe('the rule forms in Chromium', () => {
  it('adds a per-IP limit to an unguarded route from the form: one client is answered 429, another passes', async () => {
    expect([await get('/users/1', A), await get('/users/2', A), await get('/users/3', A)]).toEqual([200, 200, 200]);
    await form.addForm('hotParams');
    // The resource is picked from those the engine has seen.
    await input('resource').fill('users');
    await field('resource').locator('.picker button.pick', { hasText: 'GET /users/:id' }).click();
    await expect(input('resource').inputValue()).resolves.toBe('GET /users/:id');
    await input('key.from').selectOption('ip');
    expect(await field('key.ipv6Subnet').isVisible()).toBe(true);
    expect(await field('key.name').isHidden()).toBe(true);
    expect(await field('paramIndex').isHidden()).toBe(true);
    await expect(input('durationMs').getAttribute('placeholder')).resolves.toBe('1000');
    await input('threshold').fill('1');
    await form.saved('Rule added through engine');
    await shows(row('hotParams', 0), 'the added rule in the list');
    expect(loaded('hotParams')).toEqual([
      expect.objectContaining({ resource: 'GET /users/:id', key: { from: 'ip', ipv6Subnet: 56 }, threshold: 1 }),
    ]);
    expect([await get('/users/1', A), await get('/users/2', A)]).toEqual([200, 429]);
    expect(await get('/users/1', B)).toBe(200);
    expect(await get('/health', A)).toBe(200);
    expect(await page.locator('#rule-form').isHidden()).toBe(true);
  });

  it('edits a rule in its form, filled with its values, and the new limit holds per header value', async () => {
    await form.editForm('hotParams', 0);
    await expect(input('threshold').inputValue()).resolves.toBe('1');
    await expect(input('key.from').inputValue()).resolves.toBe('ip');
    await expect(input('key.ipv6Subnet').inputValue()).resolves.toBe(''); // its default, left to the engine
    await input('key.from').selectOption('header');
    await input('key.name').fill('X-Api-Key');
    await input('threshold').fill('2');
    await form.saved('Rule replaced through engine');
    expect(loaded('hotParams')).toEqual([
      expect.objectContaining({ key: { from: 'header', name: 'x-api-key' }, threshold: 2 }),
    ]);
    const key = (value: string) => ({ 'x-api-key': value });
    expect([await get('/users/1', A, key('k1')), await get('/users/1', B, key('k1'))]).toEqual([200, 200]);
    expect(await get('/users/1', A, key('k1'))).toBe(429);
    expect(await get('/users/1', A, key('k2'))).toBe(200);
  });

  it("shows the engine's validation next to each field, other problems in the form's list, and applies nothing", async () => {
    await form.addForm('flow');
    await input('resource').fill('GET /health');
    await input('threshold').fill('-1');
    await input('behavior').selectOption('warmUp');
    expect(await field('warmUpPeriodMs').isVisible()).toBe(true);
    await expect(form.answer('#rule-save')).resolves.toEqual({ ok: false, text: 'Rule rejected; nothing was applied' });
    await expect(field('threshold').locator('.field-issue').textContent()).resolves.toContain(
      'must be a finite number >= 0, got -1',
    );
    await expect(field('warmUpPeriodMs').locator('.field-issue').textContent()).resolves.toContain('is required');
    expect(loaded('flow')).toEqual([]);
    // A problem of the rule itself, no field's: in the form's own list.
    await page.click('#rule-cancel');
    await form.addForm('hotParams');
    await input('resource').fill('GET /health');
    await input('threshold').fill('1');
    await expect(form.answer('#rule-save')).resolves.toMatchObject({ ok: false });
    await expect(page.locator('#rule-issues li').allTextContents()).resolves.toContainEqual(
      expect.stringContaining('hotParams[1]: needs exactly one of paramIndex, paramKey and key, got none'),
    );
    await page.click('#rule-cancel');
  });

  it('refuses a save made on rules that changed since the form was opened, and says so', async () => {
    await form.editForm('hotParams', 0);
    fg.loadRules(
      { authority: [{ resource: 'GET /health', origins: ['someone'], strategy: 'deny' }] },
      { source: 'dashboard' },
    );
    await input('threshold').fill('50');
    await expect(form.answer('#rule-save')).resolves.toEqual(STALE);
    expect(loaded('hotParams')).toEqual([expect.objectContaining({ threshold: 2 })]);
    await page.click('#rule-cancel');
    await shows(row('authority', 0), 'the rule loaded meanwhile in the list');
  });

  it('deletes a rule on a second click, and the route is unguarded again', async () => {
    await row('hotParams', 0).locator('button.delete').click();
    await expect(
      form.answer(row('hotParams', 0).locator('button.delete', { hasText: 'Confirm delete' })),
    ).resolves.toEqual({
      ok: true,
      text: expect.stringContaining('Rule deleted through engine'),
    });
    await shows(row('hotParams', 0), 'the deleted rule gone from the list', 'detached');
    expect(loaded('hotParams')).toEqual([]);
    const key = { 'x-api-key': 'k1' };
    expect([await get('/users/1', A, key), await get('/users/1', A, key), await get('/users/1', A, key)]).toEqual([
      200, 200, 200,
    ]);
  });

  it('refuses the JSON of the whole layer when the rules changed since it was read', async () => {
    await page.locator('#raw-editor summary').click();
    const edited = JSON.stringify({ flow: [{ resource: 'GET /health', threshold: 1 }] });
    await page.fill('#rules-json', edited);
    fg.loadRules({ authority: [] }, { source: 'dashboard' });
    await expect(form.answer('#apply')).resolves.toEqual(STALE);
    expect(loaded('flow')).toEqual([]);
    await page.click('#revert');
    // Reverted, the page reads the layer and its version again: edited before that, it would keep the old version.
    await holds(
      async () => (await page.inputValue('#rules-json')) !== edited,
      'the loaded layer read again into the JSON',
    );
    await page.fill('#rules-json', edited);
    await expect(form.answer('#apply')).resolves.toEqual({
      ok: true,
      text: expect.stringContaining('Rules applied through engine'),
    });
    expect(loaded('flow')).toEqual([expect.objectContaining({ resource: 'GET /health' })]);
    await page.locator('#raw-editor summary').click();
  });

  it('shows resource names and rule fields that hold HTML as text in the list, the form and the picker, and runs none of it', async () => {
    fg.tryEntry(XSS);
    fg.loadRules({ flow: [{ resource: XSS, threshold: 1, limitOrigin: XSS }] }, { source: 'dashboard' });
    await shows(row('flow', 0).locator('.resource', { hasText: XSS }), 'the rule loaded from code in the list');
    await expect(row('flow', 0).locator('.resource').textContent()).resolves.toBe(XSS);
    await row('flow', 0).locator('button.edit').click();
    await expect(input('resource').inputValue()).resolves.toBe(XSS);
    await expect(input('limitOrigin').inputValue()).resolves.toBe(XSS);
    await input('resource').fill('<img');
    await shows(field('resource').locator('.picker button.pick', { hasText: XSS }), 'the resource in the picker');
    await expect(field('resource').locator('.picker button.pick').first().textContent()).resolves.toBe(XSS);
    await page.click('#rule-cancel');
    expect(await page.locator('main img').count()).toBe(0);
    expect(opened.dialogs).toEqual([]);
  });
});
