import type { Locator, Page } from 'playwright-core';
import { PAGE_WAIT_MS, shows } from './page-wait';

/** What the page's edit status says once an edit's answer has come. */
export interface EditStatus {
  /** Whether the page shows it as a success (`#edit-status.ok`). */
  readonly ok: boolean;
  readonly text: string;
}

/** The rule editor of a dashboard page in Chromium: its form's fields, the list of loaded rules, and its edits. */
export interface RuleForm {
  /** A field of the open form, by its rule path (`threshold`, `key.from`). */
  field(name: string): Locator;
  /** The input of a field of the open form. */
  input(name: string): Locator;
  /** The row of a loaded rule in the list. */
  row(kind: string, index: number): Locator;
  /** Opens the form of a new rule of `kind`. */
  addForm(kind: string): Promise<void>;
  /** Opens the form of the loaded rule at `index` of `kind`. */
  editForm(kind: string, index: number): Promise<void>;
  /** Clicks `selector` (save, apply, delete) and resolves with the edit status once the edit's answer has come. */
  answer(selector: string | Locator): Promise<EditStatus>;
  /** Saves the form; fails unless the page says the edit succeeded, in words containing `text`. */
  saved(text: string): Promise<void>;
}

/**
 * The rule editor of `page`. Its actions and waits are bounded generously ({@link PAGE_WAIT_MS}):
 * the page's own default timeout is set to it.
 */
export function ruleForm(page: Page): RuleForm {
  page.setDefaultTimeout(PAGE_WAIT_MS);
  const field = (name: string): Locator => page.locator(`#rule-fields [data-field="${name}"]`);
  const status = page.locator('#edit-status');

  async function answer(selector: string | Locator): Promise<EditStatus> {
    // The page says `Saving…` (`Deleting…`, `Applying…`) as it sends the edit, then its answer.
    const replied = page.waitForResponse(
      (response) => response.request().method() !== 'GET' && new URL(response.url()).pathname.includes('/api/rules'),
      { timeout: PAGE_WAIT_MS },
    );
    await (typeof selector === 'string' ? page.click(selector) : selector.click());
    await replied.catch((error: unknown) => {
      throw new Error(`the page sent no edit, or its edit was never answered (waited ${PAGE_WAIT_MS / 1000} s)`, {
        cause: error,
      });
    });
    await shows(status.filter({ hasNotText: /…$/ }), "the edit's answer in its status", 'attached');
    const [className, text] = await Promise.all([status.getAttribute('class'), status.textContent()]);
    return { ok: className === 'ok', text: text ?? '' };
  }

  return {
    field,
    input: (name) => field(name).locator('input, select, textarea').first(),
    row: (kind, index) => page.locator(`#loaded-rules tbody tr[data-kind="${kind}"][data-index="${index}"]`),
    async addForm(kind) {
      await page.selectOption('#add-kind', kind);
      await page.click('#add-rule');
      await shows(
        page.locator('#rule-form-title', { hasText: `Add a ${kind} rule` }),
        `the form of a new ${kind} rule`,
      );
    },
    async editForm(kind, index) {
      await this.row(kind, index).locator('button.edit').click();
      await shows(
        page.locator('#rule-form-title', { hasText: `Edit ${kind}[${index}]` }),
        `the form of ${kind}[${index}]`,
      );
    },
    answer,
    async saved(text) {
      const said = await answer('#rule-save');
      expect(said).toEqual({ ok: true, text: expect.stringContaining(text) });
    },
  };
}
