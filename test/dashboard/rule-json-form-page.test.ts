import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import type { Floodgate } from '@floodgate/core';
import { sendRaw } from '../http/raw-client';
import { openEditingPage, type EditingPage } from './support/page-app';

// A kind the dashboard has no form for (here API groups and flow rules, their forms taken away, as a
// kind added to the engine after the dashboard was written would be) is still added and edited
// from the page, as the JSON of one rule, in a real Chromium.

jest.mock('../../packages/dashboard/src/rule-forms', () => {
  const actual = jest.requireActual('../../packages/dashboard/src/rule-forms');
  return {
    ...actual,
    ruleForms: (kinds: readonly string[]) =>
      actual.ruleForms(kinds.filter((kind) => kind !== 'apiGroups' && kind !== 'flow')),
  };
});

const TOKEN = 'a-token';
const WAIT = { timeout: 10_000 };
jest.setTimeout(30_000);

let opened: EditingPage;
let page: Page;
let server: Server;
let fg: Floodgate;

beforeAll(async () => {
  opened = await openEditingPage(TOKEN, (app) => {
    app.post('/cart/:item', (_req, res) => void res.json({ ok: true }));
    app.post('/orders', (_req, res) => void res.json({ ok: true }));
  });
  ({ page, server, fg } = opened);
}, 60_000);

afterAll(() => opened?.close());

const json = () => page.locator('#rule-fields textarea[name="rule-json"]');
const post = (path: string) => sendRaw(server, 'POST', path, {}, '127.0.0.2');

async function add(kind: string, rule: unknown): Promise<void> {
  await page.selectOption('#add-kind', kind);
  await page.click('#add-rule');
  await page.locator('#rule-form-title', { hasText: `Add a ${kind} rule` }).waitFor(WAIT);
  await json().fill(JSON.stringify(rule));
  await page.click('#rule-save');
}

describe('a kind without a form, in Chromium', () => {
  it('adds rules of kinds without a form as the JSON of one rule, and they hold', async () => {
    await add('apiGroups', { name: 'checkout', patterns: ['POST /cart/*', 'POST /orders'] });
    await page.locator('#edit-status.ok', { hasText: 'Rule added through engine' }).waitFor(WAIT);
    await add('flow', { resource: 'checkout', threshold: 2 });
    await page.locator('#edit-status.ok', { hasText: 'Rule added through engine' }).waitFor(WAIT);
    expect([await post('/cart/a'), await post('/orders'), await post('/cart/b')]).toEqual([200, 200, 429]);
  });

  it('edits one as its JSON, filled with the rule, and shows its problems by path', async () => {
    await page.locator('#loaded-rules tbody tr[data-kind="apiGroups"] button.edit').click();
    await page.locator('#rule-form-title', { hasText: 'Edit apiGroups[0]' }).waitFor(WAIT);
    expect(JSON.parse(await json().inputValue())).toEqual({
      name: 'checkout',
      patterns: ['POST /cart/*', 'POST /orders'],
    });
    await json().fill(JSON.stringify({ name: 'checkout', patterns: ['POST /cart/*', 'NOT A PATTERN'] }));
    await page.click('#rule-save');
    await page.locator('#rule-issues li .path', { hasText: 'apiGroups[0].patterns[1]' }).waitFor(WAIT);
    await json().fill('{ "name": ');
    await page.click('#rule-save');
    await page.locator('#rule-issues li', { hasText: '(whole rule set): is not valid JSON' }).waitFor(WAIT);
    await json().fill(JSON.stringify({ name: 'checkout', patterns: ['POST /orders'] }));
    await page.click('#rule-save');
    await page.locator('#edit-status.ok', { hasText: 'Rule replaced through engine' }).waitFor(WAIT);
    expect(fg.getRules().apiGroups).toEqual([{ name: 'checkout', patterns: ['POST /orders'] }]);
  });
});
