import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import type { Floodgate } from '@floodgate/core';
import { sendRaw } from '../http/raw-client';
import { openEditingPage, type EditingPage } from './support/page-app';
import { PAGE_TEST_TIMEOUT_MS } from './support/page-wait';
import { ruleForm, type RuleForm } from './support/rule-form';

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
jest.setTimeout(PAGE_TEST_TIMEOUT_MS);

let opened: EditingPage;
let page: Page;
let server: Server;
let fg: Floodgate;
let form: RuleForm;

beforeAll(async () => {
  opened = await openEditingPage(TOKEN, (app) => {
    app.post('/cart/:item', (_req, res) => void res.json({ ok: true }));
    app.post('/orders', (_req, res) => void res.json({ ok: true }));
  });
  ({ page, server, fg } = opened);
  form = ruleForm(page);
}, PAGE_TEST_TIMEOUT_MS);

afterAll(() => opened?.close());

const json = () => page.locator('#rule-fields textarea[name="rule-json"]');
const post = (path: string) => sendRaw(server, 'POST', path, {}, '127.0.0.2');

async function add(kind: string, rule: unknown): Promise<void> {
  await form.addForm(kind);
  await json().fill(JSON.stringify(rule));
  await form.saved('Rule added through engine');
}

describe('a kind without a form, in Chromium', () => {
  it('adds rules of kinds without a form as the JSON of one rule, and they hold', async () => {
    await add('apiGroups', { name: 'checkout', patterns: ['POST /cart/*', 'POST /orders'] });
    await add('flow', { resource: 'checkout', threshold: 2 });
    expect([await post('/cart/a'), await post('/orders'), await post('/cart/b')]).toEqual([200, 200, 429]);
  });

  it('edits one as its JSON, filled with the rule, and shows its problems by path', async () => {
    await form.editForm('apiGroups', 0);
    expect(JSON.parse(await json().inputValue())).toEqual({
      name: 'checkout',
      patterns: ['POST /cart/*', 'POST /orders'],
    });
    await json().fill(JSON.stringify({ name: 'checkout', patterns: ['POST /cart/*', 'NOT A PATTERN'] }));
    await expect(form.answer('#rule-save')).resolves.toMatchObject({ ok: false });
    await expect(page.locator('#rule-issues li .path').allTextContents()).resolves.toContainEqual(
      expect.stringContaining('apiGroups[0].patterns[1]'),
    );
    await json().fill('{ "name": ');
    await expect(form.answer('#rule-save')).resolves.toMatchObject({ ok: false });
    await expect(page.locator('#rule-issues li').allTextContents()).resolves.toContainEqual(
      expect.stringContaining('(whole rule set): is not valid JSON'),
    );
    await json().fill(JSON.stringify({ name: 'checkout', patterns: ['POST /orders'] }));
    await form.saved('Rule replaced through engine');
    expect(fg.getRules().apiGroups).toEqual([{ name: 'checkout', patterns: ['POST /orders'] }]);
  });
});
