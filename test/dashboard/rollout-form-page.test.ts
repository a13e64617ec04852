import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import type { Floodgate } from '@floodgate/core';
import { sendRaw } from '../http/raw-client';
import { openEditingPage, type EditingPage } from './support/page-app';
import { PAGE_TEST_TIMEOUT_MS, shows } from './support/page-wait';
import { ruleForm, type RuleForm } from './support/rule-form';

// A limit rolled out from the rule form in a real Chromium, against a real Express app that
// guards every route (`everyRoute: true`): added in shadow (every request passes, the rule reports
// what it would refuse), then enforced on a share, then on everything, each step a save of the
// form. Engine time is a ManualClock: the window never refills while the test runs.

const TOKEN = 'correct-horse-battery-staple';
jest.setTimeout(PAGE_TEST_TIMEOUT_MS);

let opened: EditingPage;
let page: Page;
let server: Server;
let fg: Floodgate;
let form: RuleForm;

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
  form = ruleForm(page);
}, PAGE_TEST_TIMEOUT_MS);

afterAll(() => opened?.close());

const field = (name: string) => form.field(name);
const input = (name: string) => form.input(name);

describe('a limit rolled out from the rule form in Chromium', () => {
  it('adds a rule in shadow: it refuses nothing, and enforcePercent is not offered beside it', async () => {
    expect(await get('/report')).toBe(200);
    await form.addForm('flow');
    // The default mode is named in the empty choice.
    await expect(input('mode').locator('option[value=""]').textContent()).resolves.toBe('(default: enforce)');
    expect(await field('enforcePercent').isVisible()).toBe(true);
    await input('resource').fill('GET /report');
    await input('threshold').fill('1');
    await input('mode').selectOption('shadow');
    expect(await field('enforcePercent').isHidden()).toBe(true);
    await form.saved('Rule added through engine');
    await shows(form.row('flow', 0), 'the added rule in the list');
    expect(loaded()).toEqual([expect.objectContaining({ resource: 'GET /report', threshold: 1, mode: 'shadow' })]);
    expect([await get('/report'), await get('/report'), await get('/report')]).toEqual([200, 200, 200]);
  });

  it('enforces it on a share, then on everything, by editing the form', async () => {
    await form.editForm('flow', 0);
    await expect(input('mode').inputValue()).resolves.toBe('shadow');
    await input('mode').selectOption('enforce');
    await input('enforcePercent').fill('50');
    await form.saved('Rule replaced through engine');
    // `mode: 'enforce'` is the default: the rule in force carries only the share.
    expect(loaded()).toEqual([expect.objectContaining({ threshold: 1, enforcePercent: 50 })]);
    expect(loaded()[0]).not.toHaveProperty('mode');

    await form.editForm('flow', 0);
    await expect(input('enforcePercent').inputValue()).resolves.toBe('50');
    await input('enforcePercent').fill('');
    await form.saved('Rule replaced through engine');
    const [rule] = loaded();
    expect(rule).toEqual(expect.objectContaining({ resource: 'GET /report', threshold: 1 }));
    expect(rule).not.toHaveProperty('enforcePercent');
    expect(rule).not.toHaveProperty('mode');
    // Enforced on everything: the window (never refilled) already holds more than the threshold.
    expect(await get('/report')).toBe(429);
  });
});
